//! `utrace report --counters` of a trace with hardware counters (see
//! [`crate::analysis::hardware_counters`]): each group's sum and mean per counted range of
//! every counter, as a table, or as the JSON report's `hardware_counters`.

use std::fmt::Write;

use serde_json::json;
use utrace_format::PERF_PREFIX;

use crate::analysis::hardware_counters::HwRow;

/// A value as the table shows it: whole numbers whole, others to 0.1.
fn value(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// The table under `heading` (the grouping's), the `top` groups first; a line saying so
/// when the trace's hardware counters are on no range of the grouping, nothing when it
/// has none.
pub fn text(heading: &str, keys: &[String], rows: &[HwRow], top: Option<usize>) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        if !keys.is_empty() {
            let _ = writeln!(
                out,
                "\nhardware counters: none on the ranges grouped by {heading} (the trace has them on other ranges)"
            );
        }
        return out;
    }
    let _ = write!(
        out,
        "\nhardware counters (sum and mean per counted range: a text trace does not say a counter's unit)\n{:<28} {:>7}",
        heading, "ranges"
    );
    // Each counter's sum column as wide as its heading (drivers' names run long).
    let headings: Vec<String> = keys
        .iter()
        .map(|k| format!("{} sum", k.strip_prefix(PERF_PREFIX).unwrap_or(k)))
        .collect();
    let width = |h: &String| h.chars().count().max(12);
    for h in &headings {
        let _ = write!(out, " {:>w$} {:>12}", h, "mean", w = width(h));
    }
    out.push('\n');
    for row in rows.iter().take(top.unwrap_or(usize::MAX)) {
        let _ = write!(out, "{:<28} {:>7}", row.key, row.ranges);
        for (i, h) in headings.iter().enumerate() {
            let total = row.totals.get(i).filter(|t| t.ranges > 0);
            let _ = write!(
                out,
                " {:>w$} {:>12}",
                value(total.map(|t| t.sum)),
                value(total.and_then(|t| t.mean())),
                w = width(h)
            );
        }
        out.push('\n');
    }
    out
}

/// The groups as JSON: `{key, ranges, total_ns, <key>: {sum, mean} or null, ...}`.
pub fn json(keys: &[String], rows: &[HwRow], top: Option<usize>) -> serde_json::Value {
    rows.iter()
        .take(top.unwrap_or(usize::MAX))
        .map(|r| {
            let mut o = json!({"key": r.key, "ranges": r.ranges, "total_ns": r.total_ns});
            for (i, k) in keys.iter().enumerate() {
                o[k.as_str()] = match r.totals.get(i).filter(|t| t.ranges > 0) {
                    Some(t) => json!({"sum": t.sum, "mean": t.mean()}),
                    None => serde_json::Value::Null,
                };
            }
            o
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::hardware_counters::Total;

    #[test]
    fn each_counter_shows_its_sum_and_mean_whole_numbers_whole() {
        let keys = vec!["perf_draws".to_string(), "perf_gpu_busy".to_string()];
        let row = HwRow {
            key: "render_pass".into(),
            ranges: 2,
            totals: vec![
                Total {
                    sum: 5.0,
                    ranges: 2,
                },
                Total {
                    sum: 0.0,
                    ranges: 0,
                },
            ],
            total_ns: 200,
        };
        let table = text("range", &keys, std::slice::from_ref(&row), None);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[2].contains("draws sum") && lines[2].contains("gpu_busy sum"),
            "{table}"
        );
        let cells: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(cells, ["render_pass", "2", "5", "2.5", "-", "-"], "{table}");
        let j = json(&keys, &[row], None);
        assert_eq!(j[0]["perf_draws"]["sum"], 5.0);
        assert_eq!(j[0]["perf_draws"]["mean"], 2.5);
        assert!(j[0]["perf_gpu_busy"].is_null());
    }

    #[test]
    fn a_long_counter_name_widens_its_column() {
        let keys = vec!["perf_fragment_shader_invocations".to_string()];
        let row = HwRow {
            key: "render_pass".into(),
            ranges: 1,
            totals: vec![Total {
                sum: 7.0,
                ranges: 1,
            }],
            total_ns: 1,
        };
        let table = text("range", &keys, &[row], None);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[2].len(), lines[3].len(), "{table}");
    }

    #[test]
    fn counters_on_no_range_of_the_grouping_are_said_to_be_elsewhere() {
        let keys = vec!["perf_draws".to_string()];
        let said = text("pipeline", &keys, &[], None);
        assert!(
            said.contains("none on the ranges grouped by pipeline"),
            "{said}"
        );
        assert_eq!(
            text("pipeline", &[], &[], None),
            "",
            "no counters: nothing said"
        );
    }
}
