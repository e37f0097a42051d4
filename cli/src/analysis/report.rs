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
    /// From each submit call to its batch's first event (batches with a submit time).
    pub submit_latency: Summary,
}

pub fn build<'t>(trace: &Trace, paired: &Paired<'t>, by: By, longest: usize) -> Report<'t> {
    let mut groups: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut keyed: Vec<(String, Range<'t>)> = Vec::new();
    for r in &paired.ranges {
        if let Some(key) = key(r, by) {
            groups.entry(key.clone()).or_default().push(r.duration());
            keyed.push((key, r.clone()));
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
        submit_latency: latency::submit_to_start(trace),
    }
}
