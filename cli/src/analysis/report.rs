//! The report of `utrace report` (and `utrace run`): where the GPU time went, per group of
//! ranges, per queue and per frame, the longest ranges themselves, and how long batches
//! waited from submit to execution. Rendered by
//! `commands::report::output`.

use std::collections::BTreeMap;

use crate::analysis::groups::{key, By};
use crate::analysis::histogram::{self, Bucket};
use crate::analysis::latency;
use crate::analysis::queues::{self, Queues};
use crate::analysis::ranges::{Paired, Range};
use crate::analysis::stats::{covered, Summary};
use crate::trace::Trace;

/// Buckets of the frame-time histogram.
const FRAME_BUCKETS: usize = 10;

pub struct Row {
    pub key: String,
    pub summary: Summary,
    /// GPU time during which a range of the group ran, per device and queue, summed: nested
    /// ranges of the group (labels inside labels) count once, so its share of the busy
    /// time is at most 100%.
    pub covered_ns: u64,
}

pub struct Report<'t> {
    pub by: By,
    pub rows: Vec<Row>,
    /// GPU time covered by at least one range, per device and queue, summed.
    pub busy_ns: u64,
    pub queues: Queues,
    /// Each frame's GPU time (covered by its ranges).
    pub frames: Summary,
    pub frame_histogram: Vec<Bucket>,
    /// The longest ranges of the grouping, longest first.
    pub longest: Vec<(String, Range<'t>)>,
    pub unpaired: u64,
    /// Ranges whose end comes before their begin (a timestamp fault of the driver's or the
    /// trace's): counted as 0 µs.
    pub reversed: u64,
    /// From each submit call to its batch's first event (batches with a submit time).
    pub submit_latency: Summary,
}

pub fn build<'t>(trace: &Trace, paired: &Paired<'t>, by: By, longest: usize) -> Report<'t> {
    // Each group's durations, and its spans per device and queue.
    type Spans = BTreeMap<queues::QueueKey, Vec<(u64, u64)>>;
    let mut groups: BTreeMap<String, (Vec<u64>, Spans)> = BTreeMap::new();
    let mut keyed: Vec<(String, Range<'t>)> = Vec::new();
    for r in &paired.ranges {
        if let Some(key) = key(r, by) {
            let (durations, spans) = groups.entry(key.clone()).or_default();
            durations.push(r.duration());
            spans
                .entry((r.batch.device, r.batch.queue))
                .or_default()
                .push((r.begin_ns, r.end_ns.max(r.begin_ns)));
            keyed.push((key, r.clone()));
        }
    }
    let mut rows: Vec<Row> = groups
        .into_iter()
        .map(|(key, (mut d, mut spans))| Row {
            key,
            summary: Summary::of(&mut d),
            covered_ns: spans.values_mut().map(|s| covered(s)).sum(),
        })
        .collect();
    rows.sort_by(|a, b| {
        b.summary
            .total
            .cmp(&a.summary.total)
            .then(a.key.cmp(&b.key))
    });
    keyed.sort_by_key(|k| std::cmp::Reverse(k.1.duration()));
    keyed.truncate(longest);

    let queues = queues::of(&paired.ranges);
    let mut per_frame: BTreeMap<(u32, u64), Vec<(u64, u64)>> = BTreeMap::new();
    for r in &paired.ranges {
        per_frame
            .entry((r.batch.device, r.batch.frame))
            .or_default()
            .push((r.begin_ns, r.end_ns.max(r.begin_ns)));
    }
    let mut frame_ns: Vec<u64> = per_frame.values_mut().map(|s| covered(s)).collect();
    Report {
        by,
        rows,
        busy_ns: queues.busy.iter().map(|q| q.busy_ns).sum(),
        queues,
        frame_histogram: histogram::of(&frame_ns, FRAME_BUCKETS),
        frames: Summary::of(&mut frame_ns),
        longest: keyed,
        unpaired: paired.unpaired,
        reversed: paired
            .ranges
            .iter()
            .filter(|r| r.end_ns < r.begin_ns)
            .count() as u64,
        submit_latency: latency::submit_to_start(trace),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ranges::{pair, Spec};
    use crate::trace::{Batch, Event};

    /// A command buffer (0-100) holding three nested labels and a draw whose end comes
    /// before its begin.
    fn trace() -> Trace {
        let ev = |ns, name: &str| Event::at(ns, name, "");
        Trace {
            batches: vec![Batch {
                events: vec![
                    ev(0, "start_cmd_buffer"),
                    ev(0, "begin_label"),
                    ev(10, "begin_label"),
                    ev(20, "begin_label"),
                    ev(50, "start_draw"),
                    ev(40, "end_draw"),
                    ev(80, "end_label"),
                    ev(90, "end_label"),
                    ev(100, "end_label"),
                    ev(100, "end_cmd_buffer"),
                ],
                ..Batch::default()
            }],
            origins: Vec::new(),
            notes: vec![],
        }
    }

    #[test]
    fn nested_ranges_of_a_group_count_once_in_its_share_of_the_busy_time() {
        let trace = trace();
        let spec = Spec::built_in();
        let report = build(&trace, &pair(&trace, &spec), By::Tracepoint, 3);
        let label = report.rows.iter().find(|r| r.key == "label").unwrap();
        assert_eq!(label.summary.total, 100 + 80 + 60);
        assert_eq!((label.covered_ns, report.busy_ns), (100, 100));
        let text = crate::commands::report::output::text(&report, None);
        let line = text.lines().find(|l| l.starts_with("label")).unwrap();
        assert!(line.trim_end().ends_with(" 100.0"), "{line}");
    }

    #[test]
    fn a_range_that_ends_before_it_begins_is_noted() {
        let trace = trace();
        let spec = Spec::built_in();
        let report = build(&trace, &pair(&trace, &spec), By::Tracepoint, 3);
        assert_eq!(report.reversed, 1);
        let text = crate::commands::report::output::text(&report, None);
        assert!(
            text.contains("note: 1 ranges end before they begin"),
            "{text}"
        );
        let json = crate::commands::report::output::json(&report, None);
        assert_eq!(json["reversed_ranges"], 1);
    }
}
