//! Medians and ranges of per-round figures, and of the medians of several runs.

use serde_json::{json, Value};

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
    pub fn json(&self) -> Value {
        json!({"median": self.median(), "min": self.min(), "max": self.max()})
    }
}

/// Several runs' results combined figure by figure, as targets are judged: a figure with a
/// range (`{"median","min","max"}`) becomes the median of the runs' medians with the least
/// and greatest of them; a plain number the median of the runs' numbers; an object is
/// combined key by key (the keys of the first run that every run has). Figures a run could
/// not give (`null`) are left out.
pub fn median_of_runs(runs: &[Value]) -> Value {
    let Some(first) = runs.first() else {
        return Value::Null;
    };
    let medians = |key: Option<&str>| {
        Series(
            runs.iter()
                .filter_map(|r| key.map_or(Some(r), |k| r.get(k)))
                .filter_map(Value::as_f64)
                .collect(),
        )
    };
    match first {
        Value::Number(_) => json!(medians(None).median()),
        Value::Object(map) if map.contains_key("median") => medians(Some("median")).json(),
        Value::Object(map) => Value::Object(
            map.keys()
                .filter(|k| runs.iter().all(|r| r.get(k.as_str()).is_some()))
                .map(|k| {
                    let each: Vec<Value> = runs.iter().map(|r| r[k.as_str()].clone()).collect();
                    (k.clone(), median_of_runs(&each))
                })
                .collect(),
        ),
        other => other.clone(),
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

    #[test]
    fn runs_combine_into_the_median_of_their_medians() {
        let run = |ratio: f64, lo: f64, hi: f64, ns: f64| json!({"draws": {"ratio": {"median": ratio, "min": lo, "max": hi}, "b_ns": ns}, "label": "x"});
        let runs = [
            run(1.20, 0.5, 9.0, 74.0),
            run(1.10, 1.0, 1.3, 70.0),
            run(1.30, 1.1, 1.4, 90.0),
        ];
        let m = median_of_runs(&runs);
        // The runs' own ranges are not mixed in: the range is that of the runs' medians.
        assert_eq!(
            m["draws"]["ratio"],
            json!({"median": 1.20, "min": 1.10, "max": 1.30})
        );
        assert_eq!(m["draws"]["b_ns"], 74.0);
        assert_eq!(m["label"], "x");
    }

    #[test]
    fn figures_missing_from_a_run_are_left_out() {
        let runs = [
            json!({"a": 1.0, "b": 5.0, "only_first": 1.0}),
            json!({"a": null, "b": 7.0}),
            json!({"a": 3.0, "b": 6.0}),
        ];
        let m = median_of_runs(&runs);
        assert_eq!(m["a"], 2.0, "the two runs that have it");
        assert_eq!(m["b"], 6.0);
        assert!(m.get("only_first").is_none());
        assert_eq!(median_of_runs(&[]), Value::Null);
    }
}
