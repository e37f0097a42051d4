//! Chrome's trace-event JSON (chrome://tracing, ui.perfetto.dev): a process per device, a
//! thread (track) per queue, each range a complete (`X`) event named by its range (a label
//! range by its label) with its arguments and its batch, frame and submission; each frame's
//! start an instant event on its device. Times in microseconds from the trace's first event.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::analysis::ranges::{pair, Spec};
use crate::trace::Trace;
use utrace_format::text_args;

pub fn render(trace: &Trace, spec: &Spec) -> String {
    let paired = pair(trace, spec);
    let start = trace
        .batches
        .iter()
        .flat_map(|b| b.events.first())
        .map(|e| e.ns)
        .min()
        .unwrap_or(0);
    let us = |ns: u64| ns.saturating_sub(start) as f64 / 1000.0;
    // Tracks: one per (device, queue), numbered in order of appearance.
    let mut tracks: BTreeMap<(u32, Option<u64>), u64> = BTreeMap::new();
    for b in &trace.batches {
        let next = tracks.len() as u64 + 1;
        tracks.entry((b.device, b.queue)).or_insert(next);
    }
    let mut events: Vec<Value> = Vec::new();
    for (&(device, queue), &tid) in &tracks {
        let pid = u64::from(device) + 1;
        events.push(
            json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
            "args": {"name": format!("GPU device {device}")}}),
        );
        let name = match queue {
            Some(q) => format!("queue {q:#x}"),
            None => "queue".to_string(),
        };
        events.push(
            json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
            "args": {"name": name}}),
        );
    }
    let mut frames_seen = std::collections::BTreeSet::new();
    for b in &trace.batches {
        let first = b.events.first().map_or(0, |e| e.ns);
        if frames_seen.insert((b.device, b.frame)) {
            events.push(json!({"ph": "i", "s": "p", "name": format!("frame {}", b.frame),
                "pid": u64::from(b.device) + 1, "tid": tracks[&(b.device, b.queue)], "ts": us(first)}));
        }
    }
    for r in &paired.ranges {
        let pairs = text_args::parse(r.args);
        let name = match pairs.iter().find(|(k, _)| k == "label") {
            Some((_, label)) if r.range == "label" => label.clone(),
            _ => r.range.to_string(),
        };
        let mut a: serde_json::Map<String, Value> =
            pairs.into_iter().map(|(k, v)| (k, v.into())).collect();
        // The end's arguments the begin lacks: a counted range's GPU counters.
        for (k, v) in text_args::parse(r.end_args) {
            a.entry(k).or_insert(v.into());
        }
        a.insert("batch".into(), r.batch.number.into());
        a.insert("frame".into(), r.batch.frame.into());
        a.insert("submission".into(), r.batch.submission.into());
        events.push(json!({
            "ph": "X", "name": name, "cat": r.range,
            "pid": u64::from(r.batch.device) + 1, "tid": tracks[&(r.batch.device, r.batch.queue)],
            "ts": us(r.begin_ns), "dur": r.duration() as f64 / 1000.0, "args": a,
        }));
    }
    let mut out = json!({"traceEvents": events, "displayTimeUnit": "ns"}).to_string();
    out.push('\n');
    out
}
