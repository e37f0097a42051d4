//! The benchmark's tables as text, from one run's results or from the median of several
//! runs (the same shape; see [`super::stats::median_of_runs`]): one column per mode, one
//! line per row, each figure both as a ratio and in nanoseconds per command.

use std::fmt::Write;

use serde_json::{Map, Value};

use super::{MODES, ROWS};

/// Width of a mode's column.
const CELL: usize = 32;

/// A table's title and how it writes one mode's figures of a row.
type Table = (&'static str, fn(&Value) -> String);

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// B/A's median, B's nanoseconds per command, B/A's range: `3.55x   72.1 ns (3.48..8.56)`.
pub fn ratio_cell(row: &Value) -> String {
    format!(
        "{:.2}x {:>7.1} ns ({:.2}..{:.2})",
        num(&row["ratio"]["median"]),
        num(&row["b_ns"]),
        num(&row["ratio"]["min"]),
        num(&row["ratio"]["max"])
    )
}

/// B - A's median in nanoseconds per command, with A' - A's (two sides without the layer)
/// beside it: `+11.5 ns (A'-A +0.2)`.
pub fn diff_cell(row: &Value) -> String {
    format!(
        "{:+.1} ns (A'-A {:+.1})",
        num(&row["b_minus_a"]["median"]),
        num(&row["a2_minus_a"]["median"])
    )
}

/// A'/A's median, A''s nanoseconds, A'/A's range.
pub fn floor_cell(row: &Value) -> String {
    format!(
        "{:.2}x {:>7.1} ns ({:.2}..{:.2})",
        num(&row["floor"]["median"]),
        num(&row["a2_ns"]),
        num(&row["floor"]["min"]),
        num(&row["floor"]["max"])
    )
}

/// The tables of `results` (mode name to its rows), modes in [`MODES`] order.
pub fn tables(results: &Map<String, Value>) -> String {
    let modes: Vec<_> = MODES
        .iter()
        .filter(|m| results.contains_key(m.name))
        .collect();
    let mut out = String::new();
    let tables: [Table; 3] = [
        (
            "B/A: the layer's cost (median ratio, B in ns per command, range of the ratio)",
            ratio_cell,
        ),
        (
            "B - A: the layer's own ns per command (A' - A beside it: the noise floor in ns)",
            diff_cell,
        ),
        (
            "A'/A: the noise floor (median ratio, A' in ns, range)",
            floor_cell,
        ),
    ];
    for (title, cell) in tables {
        let _ = write!(out, "\n{title}\n{:<26} {:>8}", "", "A ns");
        for m in &modes {
            let _ = write!(out, " {:>CELL$}", m.label);
        }
        out.push('\n');
        for (row, label) in ROWS {
            let Some(first) = modes.iter().find_map(|m| results[m.name].get(row)) else {
                continue;
            };
            let _ = write!(out, "{label:<26} {:>8.1}", num(&first["a_ns"]));
            for m in &modes {
                let text = results[m.name].get(row).map_or("-".into(), cell);
                let _ = write!(out, " {text:>CELL$}");
            }
            out.push('\n');
        }
    }
    for m in modes.iter().filter(|m| m.traces_draws) {
        if let Some(row) = results[m.name].get("timed_draws") {
            let _ = writeln!(
                out,
                "\nthe layer's own share of a traced draw, {}: {:.1} ns per draw beyond the hand-timed draw \
                 (A'-A {:+.1} ns), {:.2}x the hand-timed draw ({:.1} ns)",
                m.label,
                num(&row["b_minus_a"]["median"]),
                num(&row["a2_minus_a"]["median"]),
                num(&row["ratio"]["median"]),
                num(&row["a_ns"]),
            );
        }
    }
    if modes
        .iter()
        .any(|m| results[m.name].get("threads_8").is_some())
    {
        out.push_str(
            "\n8 threads / 1 thread, CPU per dispatch with the layer (contention shows above 1)\n",
        );
        for m in &modes {
            let one = num(&results[m.name]["threads_1"]["b_ns"]);
            let eight = num(&results[m.name]["threads_8"]["b_ns"]);
            let _ = writeln!(
                out,
                "{:<26} {:.2}x ({one:.1} ns -> {eight:.1} ns)",
                m.label,
                eight / one
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn row(ratio: f64, b_ns: f64, diff: f64, floor_diff: f64) -> Value {
        json!({
            "a_ns": 62.0, "a2_ns": 62.5, "b_ns": b_ns,
            "ratio": {"median": ratio, "min": 1.1, "max": 1.3},
            "floor": {"median": 1.0, "min": 0.98, "max": 1.04},
            "b_minus_a": {"median": diff, "min": 9.0, "max": 14.0},
            "a2_minus_a": {"median": floor_diff, "min": -1.0, "max": 2.0},
        })
    }

    #[test]
    fn every_row_has_its_ratio_and_its_nanoseconds() {
        let mut results = Map::new();
        results.insert(
            "every_draw".into(),
            json!({"timed_draws": row(1.19, 73.8, 11.5, 0.2)}),
        );
        results.insert(
            "idle".into(),
            json!({"timed_draws": row(0.33, 20.5, -41.5, -0.4)}),
        );
        let text = tables(&results);
        assert!(text.contains("1.19x    73.8 ns (1.10..1.30)"), "{text}");
        assert!(text.contains("+11.5 ns (A'-A +0.2)"), "{text}");
        assert!(text.contains("1.00x    62.5 ns (0.98..1.04)"), "{text}");
        // Modes in MODES order: idle's column before every draw's.
        let header = text.lines().nth(2).unwrap();
        assert!(header.find("idle").unwrap() < header.find("every draw").unwrap());
        // Only a mode that traces draws has a share line; rows not measured are left out.
        assert!(text.contains(
            "the layer's own share of a traced draw, every draw (txt): 11.5 ns per draw beyond the hand-timed draw (A'-A +0.2 ns), 1.19x the hand-timed draw (62.0 ns)"
        ), "{text}");
        assert_eq!(text.matches("own share of a traced draw").count(), 1);
        assert!(!text.contains("vkCmdDispatch"));
        assert!(!text.contains("8 threads / 1 thread"));
    }

    #[test]
    fn a_row_one_mode_lacks_is_a_dash() {
        let mut results = Map::new();
        results.insert("idle".into(), json!({"draws": row(1.01, 20.6, 0.2, 0.1)}));
        results.insert("overlay".into(), json!({}));
        let text = tables(&results);
        let line = text.lines().find(|l| l.starts_with("vkCmdDraw ")).unwrap();
        assert!(line.trim_end().ends_with(" -"), "{line}");
    }
}
