//! The page's data: the trace's ranges in columns (a million ranges stay tens of MB of
//! JSON, not hundreds), sorted by lane, level and begin so that the page finds the visible
//! ones of a row by binary search; the batches (with their submit time where the trace
//! has it) and the frames (with their GPU time).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use serde_json::json;

use crate::analysis::ranges::{pair, Range, Spec};
use crate::analysis::stats::covered;
use crate::trace::{Batch, Trace};
use utrace_format::text_args;

/// Serialised straight to text (no `Value` per element: a million ranges).
macro_rules! text {
    ($v:expr) => {
        serde_json::to_string($v).unwrap_or_else(|_| "null".into())
    };
}

/// Strings (kinds, labels, pipelines) stored once, referred to by index.
#[derive(Default)]
struct Strings {
    index: HashMap<String, usize>,
    list: Vec<String>,
}

impl Strings {
    fn of(&mut self, text: &str) -> usize {
        if let Some(&at) = self.index.get(text) {
            return at;
        }
        self.list.push(text.to_string());
        self.index.insert(text.to_string(), self.list.len() - 1);
        self.list.len() - 1
    }
}

/// Argument lists stored once (ranges share them: a draw's arguments repeat), each parsed
/// once, with its label and its pipeline (by name, else by handle) as strings. A range's
/// list is its begin's arguments, then those of its end that the begin does not have (the
/// pipeline statistics a counted range ends with, `GPU_TRACE_COUNTERS=pipeline`).
#[derive(Default)]
struct ArgSets<'t> {
    index: HashMap<(&'t str, &'t str), usize>,
    list: Vec<Vec<(String, String)>>,
    /// Per list: (label, pipeline or -1), indices into the strings.
    names: Vec<(Option<usize>, i64)>,
}

impl<'t> ArgSets<'t> {
    fn of(&mut self, args: &'t str, end_args: &'t str, strings: &mut Strings) -> usize {
        if let Some(&at) = self.index.get(&(args, end_args)) {
            return at;
        }
        let mut pairs = text_args::parse(args);
        for (k, v) in text_args::parse(end_args) {
            if !pairs.iter().any(|(have, _)| *have == k) {
                pairs.push((k, v));
            }
        }
        let arg = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let label = arg("label").map(|l| strings.of(l));
        let pipeline = arg("pipeline_name")
            .or_else(|| arg("pipeline").filter(|p| *p != "0x0"))
            .map_or(-1, |p| strings.of(p) as i64);
        self.names.push((label, pipeline));
        self.list.push(pairs);
        self.index.insert((args, end_args), self.list.len() - 1);
        self.list.len() - 1
    }
}

/// One column per field of a range; `-1` for "none".
#[derive(Default)]
struct Columns {
    begin: Vec<u64>,
    duration: Vec<u64>,
    kind: Vec<usize>,
    name: Vec<usize>,
    pipeline: Vec<i64>,
    args: Vec<usize>,
    batch: Vec<usize>,
}

/// The page's data as JSON text: `{start_ns, lanes: [{name, device}], kinds, strings,
/// args: [[[k, v]]], rows: [[lane, level, first, count]], ranges: {b, d, kind, name, pipe,
/// args, batch}, batches: {number, device, frame, submission, thread, submit, lane},
/// frames: {device, frame, b, e, gpu}, counters: see `counter_data` (or null)}`; times in
/// ns from `start_ns`.
pub fn json(trace: &Trace, spec: &Spec) -> String {
    let paired = pair(trace, spec);
    let submits = trace.batches.iter().filter_map(|b| b.submit_ns);
    let start = paired
        .ranges
        .iter()
        .map(|r| r.begin_ns)
        .chain(submits)
        .min()
        .unwrap_or(0);
    let mut lanes: BTreeMap<(u32, Option<u64>), Vec<&Range<'_>>> = BTreeMap::new();
    for r in &paired.ranges {
        lanes
            .entry((r.batch.device, r.batch.queue))
            .or_default()
            .push(r);
    }
    let mut kinds: Vec<&str> = paired.ranges.iter().map(|r| r.range).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let batch_index: HashMap<*const Batch, usize> = trace
        .batches
        .iter()
        .enumerate()
        .map(|(i, b)| (b as *const Batch, i))
        .collect();
    let mut batch_lane: Vec<i64> = vec![-1; trace.batches.len()];

    let counter_tracks = {
        let by_lane: Vec<Vec<&Range<'_>>> = lanes.values().cloned().collect();
        super::counter_data::json(&by_lane, start)
    };
    let mut strings = Strings::default();
    let kind_names: Vec<usize> = kinds.iter().map(|k| strings.of(k)).collect();
    let mut arg_sets = ArgSets::default();
    let mut columns = Columns::default();
    let (mut lane_list, mut rows) = (Vec::new(), Vec::new());
    for (lane, ((device, queue), ranges)) in lanes.into_iter().enumerate() {
        let name = match queue {
            Some(q) => format!("device {device} queue {q:#x}"),
            None => format!("device {device}"),
        };
        lane_list.push(json!({"name": name, "device": device}));
        for (level, ranges) in levels(ranges).into_iter().enumerate() {
            rows.push([lane, level, columns.begin.len(), ranges.len()]);
            for r in ranges {
                let args_at = arg_sets.of(r.args, r.end_args, &mut strings);
                let kind = kinds.binary_search(&r.range).unwrap_or(0);
                let (label, pipeline) = arg_sets.names[args_at];
                columns.name.push(match label {
                    Some(label) if r.range == "label" => label,
                    _ => kind_names[kind],
                });
                columns.pipeline.push(pipeline);
                columns.args.push(args_at);
                columns.begin.push(r.begin_ns - start);
                columns.duration.push(r.duration());
                columns.kind.push(kind);
                let batch = batch_index[&(r.batch as *const Batch)];
                columns.batch.push(batch);
                batch_lane[batch] = lane as i64;
            }
        }
    }

    let mut out = String::new();
    let mut field = |name: &str, value: String| {
        let sep = if out.is_empty() { '{' } else { ',' };
        let _ = write!(out, "{sep}\"{name}\":{value}");
    };
    field("start_ns", start.to_string());
    field("lanes", text!(&lane_list));
    field("kinds", text!(&kinds));
    field("strings", text!(&strings.list));
    field("args", text!(&arg_sets.list));
    field("rows", text!(&rows));
    let c = &columns;
    field(
        "ranges",
        format!(
            "{{\"b\":{},\"d\":{},\"kind\":{},\"name\":{},\"pipe\":{},\"args\":{},\"batch\":{}}}",
            text!(&c.begin),
            text!(&c.duration),
            text!(&c.kind),
            text!(&c.name),
            text!(&c.pipeline),
            text!(&c.args),
            text!(&c.batch)
        ),
    );
    field("batches", batches(trace, start, &batch_lane));
    field("frames", frames(&paired.ranges, start));
    field("counters", counter_tracks);
    out.push('}');
    out
}

/// A lane's ranges by level: outer ranges first (by begin, the longer first), each on the
/// first level free at its begin. For properly nested ranges that is its nesting depth, and
/// ranges that cross (never on one queue) still never overlap on a level, which the page's
/// drawing and hit testing rely on. Each level sorted by begin.
fn levels<'r, 't>(mut ranges: Vec<&'r Range<'t>>) -> Vec<Vec<&'r Range<'t>>> {
    ranges.sort_by_key(|r| (r.begin_ns, std::cmp::Reverse(r.end_ns)));
    let mut ends: Vec<u64> = Vec::new();
    let mut levels: Vec<Vec<&Range<'_>>> = Vec::new();
    for r in ranges {
        let level = match ends.iter().position(|&e| e <= r.begin_ns) {
            Some(free) => free,
            None => {
                ends.push(0);
                levels.push(Vec::new());
                ends.len() - 1
            }
        };
        ends[level] = r.end_ns.max(r.begin_ns);
        levels[level].push(r);
    }
    levels
}

fn batches(trace: &Trace, start: u64, lane: &[i64]) -> String {
    let column = |f: &dyn Fn(&Batch) -> serde_json::Value| {
        serde_json::Value::Array(trace.batches.iter().map(f).collect())
    };
    json!({
        "number": column(&|b| json!(b.number)),
        "device": column(&|b| json!(b.device)),
        "frame": column(&|b| json!(b.frame)),
        "submission": column(&|b| json!(b.submission)),
        "thread": column(&|b| json!(b.thread)),
        "submit": column(&|b| json!(b.submit_ns.map(|s| s.saturating_sub(start)))),
        "lane": lane,
    })
    .to_string()
}

/// Each frame (per device): its span from its first range's begin to its last range's
/// end, and its GPU time: the time covered by its ranges (as `utrace report` counts it).
fn frames(ranges: &[Range<'_>], start: u64) -> String {
    let mut spans: BTreeMap<(u32, u64), Vec<(u64, u64)>> = BTreeMap::new();
    for r in ranges {
        spans
            .entry((r.batch.device, r.batch.frame))
            .or_default()
            .push((r.begin_ns - start, r.end_ns.max(r.begin_ns) - start));
    }
    let (mut device, mut frame, mut b, mut e, mut gpu) = (vec![], vec![], vec![], vec![], vec![]);
    for ((d, f), mut s) in spans {
        device.push(d);
        frame.push(f);
        b.push(s.iter().map(|x| x.0).min().unwrap_or(0));
        e.push(s.iter().map(|x| x.1).max().unwrap_or(0));
        gpu.push(covered(&mut s));
    }
    json!({"device": device, "frame": frame, "b": b, "e": e, "gpu": gpu}).to_string()
}
