//! A report as a table (for people) or one JSON object (for scripts).

use std::fmt::Write;

use serde_json::json;

use crate::analysis::histogram;
use crate::analysis::queues;
use crate::analysis::report::Report;

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// The report as text: the groups' table (the `top` first), then queues, frames and the
/// longest ranges.
pub fn text(report: &Report<'_>, top: Option<usize>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<28} {:>8} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}",
        report.by.heading(),
        "count",
        "total µs",
        "mean µs",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "max µs",
        "busy%"
    );
    for row in report.rows.iter().take(top.unwrap_or(usize::MAX)) {
        let s = &row.summary;
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
            share(row.covered_ns, report.busy_ns)
        );
    }
    let _ = writeln!(
        out,
        "\nGPU busy: {} µs (time covered by any range, per queue)",
        us(report.busy_ns)
    );
    for q in &report.queues.busy {
        let _ = writeln!(
            out,
            "  {}: busy {} µs",
            queues::name(&q.queue),
            us(q.busy_ns)
        );
    }
    for o in &report.queues.overlaps {
        let _ = writeln!(
            out,
            "  {} and {}: both busy {} µs",
            queues::name(&o.a),
            queues::name(&o.b),
            us(o.overlap_ns)
        );
    }
    let f = &report.frames;
    let _ = writeln!(
        out,
        "\nframes: {}, GPU time per frame µs: min {} p50 {} p90 {} p99 {} max {}",
        f.count,
        us(f.min),
        us(f.p50),
        us(f.p90),
        us(f.p99),
        us(f.max)
    );
    if report.frame_histogram.len() > 1 {
        out.push_str(&histogram::text(&report.frame_histogram, 40));
    }
    let l = &report.submit_latency;
    if l.count > 0 {
        let _ = writeln!(
            out,
            "\nsubmit to GPU start µs ({} batch{}): min {} p50 {} p90 {} p99 {} max {}",
            l.count,
            if l.count == 1 { "" } else { "es" },
            us(l.min),
            us(l.p50),
            us(l.p90),
            us(l.p99),
            us(l.max)
        );
    }
    if !report.longest.is_empty() {
        let _ = writeln!(out, "\nlongest ranges:");
        for (key, r) in &report.longest {
            let _ = writeln!(
                out,
                "  {:>10} µs  {key}  (batch {}, frame {}) {}",
                us(r.duration()),
                r.batch.number,
                r.batch.frame,
                r.args
            );
        }
    }
    if report.unpaired > 0 {
        let _ = writeln!(
            out,
            "note: {} events had no matching begin or end",
            report.unpaired
        );
    }
    if report.reversed > 0 {
        let _ = writeln!(
            out,
            "note: {} ranges end before they begin (their timestamps are wrong); each counts as 0 µs",
            report.reversed
        );
    }
    out
}

fn share(part: u64, whole: u64) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// The report as one JSON object: `rows` of `{key, count, total_ns, mean_ns, p50_ns, p90_ns,
/// p99_ns, max_ns, covered_ns}`, the busy time (per queue, and two queues' overlaps), the
/// frames' summary and histogram, the longest ranges, the unpaired events, the ranges that
/// end before they begin (`reversed_ranges`) and the submit-to-start
/// latency (`null` when no batch has a submit time).
pub fn json(report: &Report<'_>, top: Option<usize>) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = report
        .rows
        .iter()
        .take(top.unwrap_or(usize::MAX))
        .map(|r| {
            let s = &r.summary;
            json!({
                "key": r.key, "count": s.count, "total_ns": s.total, "mean_ns": s.mean,
                "p50_ns": s.p50, "p90_ns": s.p90, "p99_ns": s.p99, "max_ns": s.max,
                "covered_ns": r.covered_ns,
            })
        })
        .collect();
    let queue =
        |q: &queues::QueueKey| json!({"device": q.0, "queue": q.1.map(|h| format!("{h:#x}"))});
    let f = &report.frames;
    let l = &report.submit_latency;
    json!({
        "rows": rows,
        "busy_ns": report.busy_ns,
        "queues": report.queues.busy.iter().map(|q| {
            json!({"queue": queue(&q.queue), "busy_ns": q.busy_ns})
        }).collect::<Vec<_>>(),
        "overlaps": report.queues.overlaps.iter().map(|o| {
            json!({"a": queue(&o.a), "b": queue(&o.b), "overlap_ns": o.overlap_ns})
        }).collect::<Vec<_>>(),
        "frames": {
            "count": f.count, "min_ns": f.min, "p50_ns": f.p50, "p90_ns": f.p90,
            "p99_ns": f.p99, "max_ns": f.max,
            "histogram": report.frame_histogram.iter().map(|b| {
                json!({"from_ns": b.from_ns, "to_ns": b.to_ns, "count": b.count})
            }).collect::<Vec<_>>(),
        },
        "longest": report.longest.iter().map(|(key, r)| {
            json!({
                "key": key, "range": r.range, "duration_ns": r.duration(),
                "begin_ns": r.begin_ns, "device": r.batch.device, "batch": r.batch.number,
                "frame": r.batch.frame, "args": r.args,
            })
        }).collect::<Vec<_>>(),
        "unpaired_events": report.unpaired,
        "reversed_ranges": report.reversed,
        "submit_latency": (l.count > 0).then(|| json!({
            "count": l.count, "min_ns": l.min, "p50_ns": l.p50, "p90_ns": l.p90,
            "p99_ns": l.p99, "max_ns": l.max,
        })),
    })
}
