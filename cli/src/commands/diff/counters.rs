//! `utrace diff`'s counters: where both traces have pipeline statistics
//! (`GPU_TRACE_COUNTERS=pipeline`), each group's statistics per range compared from A to B,
//! so that a pass found HURT can be seen to shade twice the fragments, or to be the same
//! work run slower; where neither has them but both have hardware counters
//! (`perf:NAME,...`), each counter's mean per counted range likewise. Counters are counts,
//! not timings: any change is listed, with no test of significance.

use std::fmt::Write;

use serde_json::json;

use crate::analysis::counters::{Row, NAMES};
use crate::analysis::hardware_counters::HwRow;

/// One statistic of one group whose value per range changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub key: String,
    /// The statistic's name, or the hardware counter's key.
    pub name: String,
    /// The group's sum over its counted ranges, per range, in A and in B.
    pub per_range_a: f64,
    pub per_range_b: f64,
}

impl Change {
    /// In percent (infinite from 0).
    pub fn change_pct(&self) -> f64 {
        if self.per_range_a == 0.0 {
            f64::INFINITY
        } else {
            (self.per_range_b - self.per_range_a) * 100.0 / self.per_range_a
        }
    }
}

/// The comparison: how many groups both traces counted, and what changed in them; or which
/// one trace alone has statistics (nothing compared).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CounterDiff {
    /// What was compared: "pipeline statistics" or "hardware counters".
    pub kind: &'static str,
    pub groups: usize,
    pub changes: Vec<Change>,
    /// `Some("A")` or `Some("B")`: only that trace has them.
    pub only_in: Option<&'static str>,
}

const STATISTICS: &str = "pipeline statistics";
const HARDWARE: &str = "hardware counters";

/// `None` when neither side has counters of this kind; a one-sided diff when one has.
fn sides(kind: &'static str, a_empty: bool, b_empty: bool) -> Option<CounterDiff> {
    match (a_empty, b_empty) {
        (true, true) => None,
        (false, true) | (true, false) => Some(CounterDiff {
            kind,
            only_in: Some(if a_empty { "B" } else { "A" }),
            ..CounterDiff::default()
        }),
        (false, false) => Some(CounterDiff {
            kind,
            ..CounterDiff::default()
        }),
    }
}

/// Compares the groups of `a` and `b` (each trace's counter rows under the same grouping)
/// that both counted; `None` when neither trace has statistics.
pub fn compare(a: &[Row], b: &[Row]) -> Option<CounterDiff> {
    let mut d = sides(STATISTICS, a.is_empty(), b.is_empty())?;
    if d.only_in.is_some() {
        return Some(d);
    }
    let mut common: Vec<(&Row, &Row)> = a
        .iter()
        .filter(|ra| ra.ranges > 0)
        .filter_map(|ra| Some((ra, b.iter().find(|rb| rb.key == ra.key && rb.ranges > 0)?)))
        .collect();
    common.sort_by(|x, y| x.0.key.cmp(&y.0.key));
    d.groups = common.len();
    for (ra, rb) in common {
        for (i, name) in NAMES.iter().enumerate() {
            let (Some(sa), Some(sb)) = (ra.sums[i], rb.sums[i]) else {
                continue;
            };
            let per_range_a = sa as f64 / ra.ranges as f64;
            let per_range_b = sb as f64 / rb.ranges as f64;
            if per_range_a != per_range_b {
                d.changes.push(Change {
                    key: ra.key.clone(),
                    name: name.to_string(),
                    per_range_a,
                    per_range_b,
                });
            }
        }
    }
    Some(d)
}

/// Compares the groups of two traces' hardware counters (`(keys, rows)` of each, under the
/// same grouping) that both counted: each counter both show, its mean per counted range;
/// `None` when neither trace has hardware counters.
pub fn compare_hardware(
    a: &(Vec<String>, Vec<HwRow>),
    b: &(Vec<String>, Vec<HwRow>),
) -> Option<CounterDiff> {
    let mut d = sides(HARDWARE, a.1.is_empty(), b.1.is_empty())?;
    if d.only_in.is_some() {
        return Some(d);
    }
    let mut common: Vec<(&HwRow, &HwRow)> =
        a.1.iter()
            .filter_map(|ra| Some((ra, b.1.iter().find(|rb| rb.key == ra.key)?)))
            .collect();
    common.sort_by(|x, y| x.0.key.cmp(&y.0.key));
    d.groups = common.len();
    for (ra, rb) in common {
        for (i, name) in a.0.iter().enumerate() {
            let Some(j) = b.0.iter().position(|k| k == name) else {
                continue;
            };
            let mean = |r: &HwRow, i: usize| r.totals.get(i).and_then(|t| t.mean());
            let (Some(per_range_a), Some(per_range_b)) = (mean(ra, i), mean(rb, j)) else {
                continue;
            };
            if per_range_a != per_range_b {
                d.changes.push(Change {
                    key: ra.key.clone(),
                    name: name.clone(),
                    per_range_a,
                    per_range_b,
                });
            }
        }
    }
    Some(d)
}

/// The counters' section of the text output, after the times'.
pub fn text(d: &CounterDiff, heading: &str, out: &mut String) {
    if let Some(side) = d.only_in {
        let _ = writeln!(
            out,
            "\ncounters: only trace {side} has {}; nothing compared",
            d.kind
        );
        return;
    }
    if d.changes.is_empty() {
        let _ = writeln!(
            out,
            "\ncounters per range: unchanged in {} ({} in both traces)",
            groups(d.groups),
            d.kind
        );
        return;
    }
    let changed = {
        let mut keys: Vec<&str> = d.changes.iter().map(|c| c.key.as_str()).collect();
        keys.dedup();
        keys.len()
    };
    let _ = writeln!(
        out,
        "\ncounters per range: changed in {changed} of {} ({} in both traces)",
        groups(d.groups),
        d.kind
    );
    let width = d
        .changes
        .iter()
        .map(|c| c.key.chars().count())
        .chain([heading.len(), 24])
        .max()
        .unwrap_or(24)
        .min(48);
    let _ = writeln!(
        out,
        "{heading:<width$} {:<22} {:>14} {:>14} {:>9}",
        if d.kind == HARDWARE {
            "counter"
        } else {
            "statistic"
        },
        "A per range",
        "B per range",
        "change %"
    );
    for c in &d.changes {
        let pct = c.change_pct();
        let pct = if pct.is_infinite() {
            "+inf".to_string()
        } else {
            format!("{pct:+.1}")
        };
        let _ = writeln!(
            out,
            "{:<width$} {:<22} {:>14} {:>14} {:>9}",
            c.key,
            c.name,
            number(c.per_range_a),
            number(c.per_range_b),
            pct
        );
    }
}

fn groups(n: usize) -> String {
    if n == 1 {
        "1 group".into()
    } else {
        format!("{n} groups")
    }
}

/// A count per range: whole when it is, else with one decimal.
fn number(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// `{kind, groups, changed: [{key, statistic, per_range_a, per_range_b, change_pct}],
/// only_in}` (`kind` "pipeline statistics" or "hardware counters", `statistic` then the
/// counter's key; the change null from 0; `only_in` "A" or "B" where one trace alone has
/// them, else null).
pub fn json(d: &CounterDiff) -> serde_json::Value {
    let changed: Vec<serde_json::Value> = d
        .changes
        .iter()
        .map(|c| {
            json!({
                "key": c.key, "statistic": c.name,
                "per_range_a": c.per_range_a, "per_range_b": c.per_range_b,
                "change_pct": Some(c.change_pct()).filter(|p| p.is_finite()),
            })
        })
        .collect();
    json!({ "kind": d.kind, "groups": d.groups, "changed": changed, "only_in": d.only_in })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str, ranges: u64, sums: [Option<u64>; NAMES.len()]) -> Row {
        Row {
            key: key.into(),
            ranges,
            sums,
            ..Row::default()
        }
    }

    #[test]
    fn each_groups_statistics_per_range_are_compared() {
        let cs = |v| [None, None, None, None, None, None, Some(v), None, None];
        let a = [
            row("lighting", 20, cs(20 * 960)),
            row("post", 20, cs(20 * 64)),
            row("gone", 1, cs(5)),
        ];
        // lighting: ten times the work; post: the same per range over more ranges.
        let b = [
            row("lighting", 20, cs(20 * 9600)),
            row("post", 25, cs(25 * 64)),
            row("new", 1, cs(7)),
        ];
        let d = compare(&a, &b).expect("statistics");
        assert_eq!(d.groups, 2, "only groups both counted");
        assert_eq!(d.changes.len(), 1);
        let c = &d.changes[0];
        assert_eq!(
            (c.key.as_str(), c.name.as_str()),
            ("lighting", "compute_invocations")
        );
        assert_eq!((c.per_range_a, c.per_range_b), (960.0, 9600.0));
        assert_eq!(c.change_pct(), 900.0);
        let mut t = String::new();
        text(&d, "label", &mut t);
        assert!(t.contains("changed in 1 of 2 groups"), "{t}");
        assert!(t.contains("lighting") && t.contains("+900.0"), "{t}");
        assert_eq!(json(&d)["changed"][0]["per_range_b"], 9600.0);
        assert_eq!(compare(&[], &[]), None, "no statistics: no section");
        let one_sided = compare(&a, &[]).expect("a section");
        assert_eq!((one_sided.only_in, one_sided.groups), (Some("A"), 0));
        let mut t = String::new();
        text(&one_sided, "label", &mut t);
        assert!(t.contains("only trace A has pipeline statistics"), "{t}");
        assert_eq!(json(&one_sided)["only_in"], "A");
        assert_eq!(compare(&[], &a).and_then(|d| d.only_in), Some("B"));
        let same = compare(&a[..1], &a[..1]).expect("statistics");
        let mut t = String::new();
        text(&same, "label", &mut t);
        assert!(t.contains("unchanged in 1 group"), "{t}");
    }

    #[test]
    fn a_statistic_from_zero_changes_infinitely_and_json_says_null() {
        let vs = |v| [None, None, Some(v), None, None, None, None, None, None];
        let d = compare(&[row("pass", 1, vs(0))], &[row("pass", 1, vs(3))]).expect("statistics");
        assert!(d.changes[0].change_pct().is_infinite());
        assert_eq!(
            json(&d)["changed"][0]["change_pct"],
            serde_json::Value::Null
        );
    }

    #[test]
    fn hardware_counters_compare_their_means_per_counted_range() {
        use crate::analysis::hardware_counters::Total;
        let row = |key: &str, ranges, sums: &[f64]| HwRow {
            key: key.into(),
            ranges,
            totals: sums.iter().map(|&sum| Total { sum, ranges }).collect(),
            total_ns: 0,
        };
        let keys = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let a = (
            keys(&["perf_draws", "perf_gpu_busy"]),
            vec![
                row("shadow", 2, &[4.0, 100.0]),
                row("post", 1, &[1.0, 50.0]),
            ],
        );
        // B: the counters in another order; shadow draws twice as much, busy the same.
        let b = (
            keys(&["perf_gpu_busy", "perf_draws"]),
            vec![
                row("shadow", 4, &[200.0, 16.0]),
                row("post", 1, &[50.0, 1.0]),
            ],
        );
        let d = compare_hardware(&a, &b).expect("hardware counters");
        assert_eq!((d.kind, d.groups), ("hardware counters", 2));
        assert_eq!(d.changes.len(), 1, "{d:?}");
        let c = &d.changes[0];
        assert_eq!((c.key.as_str(), c.name.as_str()), ("shadow", "perf_draws"));
        assert_eq!((c.per_range_a, c.per_range_b), (2.0, 4.0));
        let mut t = String::new();
        text(&d, "label", &mut t);
        assert!(
            t.contains("changed in 1 of 2 groups (hardware counters in both traces)"),
            "{t}"
        );
        assert!(t.contains("counter") && t.contains("+100.0"), "{t}");
        let empty = (Vec::new(), Vec::new());
        assert_eq!(compare_hardware(&empty, &empty), None);
        assert_eq!(
            compare_hardware(&a, &empty).and_then(|d| d.only_in),
            Some("A")
        );
    }
}
