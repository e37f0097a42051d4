//! `utrace report --counters`: each group's pipeline statistics (see
//! [`crate::analysis::counters`]) as a table, or as the JSON report's `counters`.

use std::fmt::Write;

use serde_json::json;

use crate::analysis::counters::{Row, NAMES};

/// The table's headings for the statistics, in [`NAMES`]' order.
const HEADINGS: [&str; NAMES.len()] = [
    "vertices",
    "primitives",
    "vs inv",
    "clip inv",
    "clip prims",
    "fs inv",
    "cs inv",
    "task inv",
    "mesh inv",
];

/// The statistics every table has; the mesh shading ones after them only where a group
/// has them (a device that counts them, `meshShaderQueries`).
const ALWAYS: usize = 7;

/// The columns of `rows`' table: indices into [`NAMES`].
fn columns(rows: &[Row]) -> Vec<usize> {
    (0..NAMES.len())
        .filter(|&i| i < ALWAYS || rows.iter().any(|r| r.sums[i].is_some()))
        .collect()
}

fn value(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn rate(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

/// The table under `heading` (the grouping's), the `top` groups first; a line saying why
/// when the trace has no statistics.
pub fn text(heading: &str, rows: &[Row], top: Option<usize>) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str(
            "\nno pipeline statistics in this trace (trace with GPU_TRACE_COUNTERS=pipeline)\n",
        );
        return out;
    }
    let _ = write!(
        out,
        "\npipeline statistics\n{:<28} {:>7}",
        heading, "ranges"
    );
    let columns = columns(rows);
    for &i in &columns {
        let _ = write!(out, " {:>11}", HEADINGS[i]);
    }
    let _ = writeln!(
        out,
        " {:>10} {:>13} {:>11}",
        "fs inv/µs", "µs/1k prims", "cs inv/range"
    );
    for row in rows.iter().take(top.unwrap_or(usize::MAX)) {
        let _ = write!(out, "{:<28} {:>7}", row.key, row.ranges);
        for &i in &columns {
            let _ = write!(out, " {:>11}", value(row.sums[i]));
        }
        let _ = writeln!(
            out,
            " {:>10} {:>13} {:>11}",
            rate(row.fragments_per_us()),
            rate(row.us_per_1000_primitives()),
            rate(row.invocations_per_range())
        );
    }
    let partial: u64 = rows.iter().map(|r| r.partial).sum();
    if partial > 0 {
        let _ = writeln!(
            out,
            "note: {partial} ranges were measured only in part or not at all (an application's own statistics query overlapped them, or they hold subpasses of secondaries or of several views the device could not count): their sums leave that part out"
        );
    }
    out
}

/// The groups as JSON: `{key, ranges, partial, total_ns, <statistic>: sum or null, ...,
/// fragment_invocations_per_us, us_per_1000_primitives, compute_invocations_per_range}`.
pub fn json(rows: &[Row], top: Option<usize>) -> serde_json::Value {
    rows.iter()
        .take(top.unwrap_or(usize::MAX))
        .map(|r| {
            let mut o = json!({
                "key": r.key, "ranges": r.ranges, "partial": r.partial, "total_ns": r.total_ns,
                "fragment_invocations_per_us": r.fragments_per_us(),
                "us_per_1000_primitives": r.us_per_1000_primitives(),
                "compute_invocations_per_range": r.invocations_per_range(),
            });
            for (name, sum) in NAMES.iter().zip(r.sums) {
                o[*name] = json!(sum);
            }
            o
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mesh_shading_columns_come_only_with_their_values() {
        let mut row = Row {
            key: "draw_mesh_tasks".into(),
            ranges: 1,
            ..Row::default()
        };
        row.sums[5] = Some(576);
        let plain = text("range", std::slice::from_ref(&row), None);
        assert!(
            plain.contains("cs inv") && !plain.contains("task inv"),
            "{plain}"
        );
        row.sums[7] = Some(1);
        row.sums[8] = Some(1);
        let mesh = text("range", std::slice::from_ref(&row), None);
        let heading = mesh.lines().nth(2).unwrap();
        assert!(heading.contains("cs inv    task inv    mesh inv"), "{mesh}");
        assert_eq!(json(&[row], None)[0]["task_invocations"], 1);
    }
}
