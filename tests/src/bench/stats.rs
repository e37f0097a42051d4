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

    /// `{"median":…,"min":…,"max":…}`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({"median": self.median(), "min": self.min(), "max": self.max()})
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
        assert_eq!(s.json()["median"], 2.5);
    }
}
