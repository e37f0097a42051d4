//! Medians and ranges of per-round figures.

/// One figure measured over many rounds.
#[derive(Clone, Debug, Default)]
pub struct Series(pub Vec<f64>);

impl Series {
    pub fn push(&mut self, v: f64) {
        self.0.push(v);
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    pub fn median(&self) -> f64 {
        let v = self.sorted();
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }

    pub fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(f64::NAN)
    }

    pub fn max(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(f64::NAN)
    }

    /// `1.23x (1.20..1.31)`.
    pub fn ratio_text(&self) -> String {
        format!(
            "{:.2}x ({:.2}..{:.2})",
            self.median(),
            self.min(),
            self.max()
        )
    }

    /// `{"median":…,"min":…,"max":…}`.
    pub fn json(&self) -> String {
        format!(
            r#"{{"median":{:.4},"min":{:.4},"max":{:.4}}}"#,
            self.median(),
            self.min(),
            self.max()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max() {
        let s = Series(vec![3.0, 1.0, 2.0, 10.0]);
        assert_eq!(s.median(), 2.5);
        assert_eq!(s.min(), 1.0);
        assert_eq!(s.max(), 10.0);
        assert_eq!(Series(vec![5.0, 1.0, 3.0]).median(), 3.0);
        assert!(Series::default().median().is_nan());
        assert_eq!(s.ratio_text(), "2.50x (1.00..10.00)");
    }
}
