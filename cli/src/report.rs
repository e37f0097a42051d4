//! `utrace report`: where the GPU time went, per group of ranges, and per frame.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::json;

use crate::groups::{key, By};
use crate::ranges::Paired;
use crate::stats::{covered, Summary};

/// (begin, end) nanoseconds.
type Spans = Vec<(u64, u64)>;

pub struct Row {
    pub key: String,
    pub summary: Summary,
}

pub struct Report {
    pub rows: Vec<Row>,
    /// GPU time covered by at least one range, per device and queue, summed.
    pub busy_ns: u64,
    /// Each frame's GPU time (covered by its ranges).
    pub frames: Summary,
    pub unpaired: u64,
}

pub fn build(paired: &Paired<'_>, by: By) -> Report {
    let mut groups: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for r in &paired.ranges {
        if let Some(key) = key(r, by) {
            groups.entry(key).or_default().push(r.duration());
        }
    }
    let mut rows: Vec<Row> = groups
        .into_iter()
        .map(|(key, mut d)| Row {
            key,
            summary: Summary::of(&mut d),
        })
        .collect();
    rows.sort_by(|a, b| {
        b.summary
            .total
            .cmp(&a.summary.total)
            .then(a.key.cmp(&b.key))
    });

    // Busy time per (device, queue), and per frame, from the spans the ranges cover.
    let mut per_queue: BTreeMap<(u32, Option<u64>), Spans> = BTreeMap::new();
    let mut per_frame: BTreeMap<(u32, u64), Spans> = BTreeMap::new();
    for r in &paired.ranges {
        let span = (r.begin_ns, r.end_ns.max(r.begin_ns));
        per_queue
            .entry((r.batch.device, r.batch.queue))
            .or_default()
            .push(span);
        per_frame
            .entry((r.batch.device, r.batch.frame))
            .or_default()
            .push(span);
    }
    let busy_ns = per_queue.values_mut().map(|s| covered(s)).sum();
    let mut frame_ns: Vec<u64> = per_frame.values_mut().map(|s| covered(s)).collect();
    Report {
        rows,
        busy_ns,
        frames: Summary::of(&mut frame_ns),
        unpaired: paired.unpaired,
    }
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// The report as a table.
pub fn text(report: &Report, top: Option<usize>, by: By) -> String {
    let mut out = String::new();
    let heading = by.heading();
    let _ = writeln!(
        out,
        "{heading:<28} {:>8} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}",
        "count", "total µs", "mean µs", "p50 µs", "p90 µs", "p99 µs", "max µs", "busy%"
    );
    for row in report.rows.iter().take(top.unwrap_or(usize::MAX)) {
        let s = &row.summary;
        let share = if report.busy_ns > 0 {
            100.0 * s.total as f64 / report.busy_ns as f64
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "{:<28} {:>8} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7.1}",
            row.key,
            s.count,
            us(s.total),
            us(s.mean),
            us(s.p50),
            us(s.p90),
            us(s.p99),
            us(s.max),
            share
        );
    }
    let _ = writeln!(
        out,
        "\nGPU busy: {} µs (time covered by any range, per queue)",
        us(report.busy_ns)
    );
    let f = &report.frames;
    let _ = writeln!(
        out,
        "frames: {}, GPU time per frame µs: min {} p50 {} p90 {} p99 {} max {}",
        f.count,
        us(f.min),
        us(f.p50),
        us(f.p90),
        us(f.p99),
        us(f.max)
    );
    if report.unpaired > 0 {
        let _ = writeln!(
            out,
            "note: {} events had no matching begin or end",
            report.unpaired
        );
    }
    out
}

/// The report as one JSON object: `rows` of `{key, count, total_ns, mean_ns, p50_ns, p90_ns,
/// p99_ns, max_ns}`, the busy time, the frames' summary and the unpaired events.
pub fn json(report: &Report, top: Option<usize>) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = report
        .rows
        .iter()
        .take(top.unwrap_or(usize::MAX))
        .map(|r| {
            let s = &r.summary;
            json!({
                "key": r.key, "count": s.count, "total_ns": s.total, "mean_ns": s.mean,
                "p50_ns": s.p50, "p90_ns": s.p90, "p99_ns": s.p99, "max_ns": s.max,
            })
        })
        .collect();
    let f = &report.frames;
    json!({
        "rows": rows,
        "busy_ns": report.busy_ns,
        "frames": {
            "count": f.count, "min_ns": f.min, "p50_ns": f.p50, "p90_ns": f.p90,
            "p99_ns": f.p99, "max_ns": f.max,
        },
        "unpaired_events": report.unpaired,
    })
}
