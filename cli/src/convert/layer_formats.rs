//! The layer's own json lines and csv (layer/src/sink/json.rs, csv.rs), written from any
//! trace: a txt trace becomes json or csv that `report` reads the same. What the model does
//! not keep is left out (a batch's `cmdbufs` and `queries`); a value that reads as a number
//! or boolean is written bare in json, as the layer writes those kinds.

use std::fmt::Write;

use utrace_tracepoints::spec::Kind;

use crate::args;
use crate::ranges::Spec;
use crate::trace::{Batch, Trace};

/// Each event of `batch` with its delta from the previous and its depth (open ranges
/// around it, as the layer indents).
fn walk<'b>(batch: &'b Batch, spec: &Spec) -> Vec<(&'b crate::trace::Event, i64, usize)> {
    let mut depth = 0usize;
    let mut prev = batch.events.first().map_or(0, |e| e.ns);
    batch
        .events
        .iter()
        .map(|e| {
            let delta = e.ns.wrapping_sub(prev) as i64;
            prev = e.ns;
            let at = match spec.kind(&e.name) {
                Some(Kind::Begin) => {
                    depth += 1;
                    depth - 1
                }
                Some(Kind::End) => {
                    depth = depth.saturating_sub(1);
                    depth
                }
                _ => depth,
            };
            (e, delta, at)
        })
        .collect()
}

fn json_value(value: &str) -> serde_json::Value {
    if let Ok(n) = value.parse::<u64>() {
        n.into()
    } else if let Ok(n) = value.parse::<i64>() {
        n.into()
    } else if let Ok(b) = value.parse::<bool>() {
        b.into()
    } else {
        value.into()
    }
}

pub fn json(trace: &Trace, spec: &Spec) -> String {
    let mut out = String::new();
    for b in &trace.batches {
        let events: Vec<serde_json::Value> = walk(b, spec)
            .into_iter()
            .map(|(e, delta, depth)| {
                let args: serde_json::Map<String, serde_json::Value> = args::parse(&e.args)
                    .into_iter()
                    .map(|(k, v)| (k, json_value(&v)))
                    .collect();
                serde_json::json!({"ns": e.ns, "delta": delta, "depth": depth, "name": e.name, "args": args})
            })
            .collect();
        let elapsed = match (b.events.first(), b.events.last()) {
            (Some(f), Some(l)) => l.ns.saturating_sub(f.ns),
            _ => 0,
        };
        // The layer's field order: readers tell the format by `{"type":` first.
        let mut line = format!(
            "{{\"type\":\"batch\",\"device\":{},\"batch\":{}",
            b.device, b.number
        );
        if let Some(q) = b.queue {
            let _ = write!(line, ",\"queue\":\"{q:#x}\"");
        }
        let _ = write!(
            line,
            ",\"frame\":{},\"submission\":{}",
            b.frame, b.submission
        );
        // Fields the source did not say are left out, not written as null.
        if let Some(t) = b.thread {
            let _ = write!(line, ",\"thread\":{t}");
        }
        let _ = write!(
            line,
            ",\"elapsed_ns\":{elapsed},\"events\":{}}}",
            serde_json::Value::from(events)
        );
        let _ = writeln!(out, "{line}");
    }
    out
}

pub fn csv(trace: &Trace, spec: &Spec) -> String {
    let mut out = String::from("device,batch,frame,submission,thread,ns,delta,depth,event,args\n");
    for b in &trace.batches {
        let thread = b.thread.map(|t| t.to_string()).unwrap_or_default();
        for (e, delta, depth) in walk(b, spec) {
            let _ = writeln!(
                out,
                "{},{},{},{},{thread},{},{delta},{depth},{},\"{}\"",
                b.device,
                b.number,
                b.frame,
                b.submission,
                e.ns,
                e.name,
                e.args.replace('"', "\"\"")
            );
        }
    }
    out
}
