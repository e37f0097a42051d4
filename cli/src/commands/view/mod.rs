//! `utrace view TRACE -o timeline.html`: one self-contained HTML file (no network access:
//! styles, script and the trace's data inline) showing the GPU timeline: a lane per queue,
//! frames as bands, nested ranges as labelled bars, arguments on hover, zoom and pan. The
//! page is `timeline.html`; this module gives it its data.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::analysis::ranges::{pair, Range, Spec};
use crate::trace::Trace;
use utrace_format::text_args;

const PAGE: &str = include_str!("timeline.html");
/// Where the page takes its data (a JSON object).
const DATA_MARK: &str = "/*UTRACE_DATA*/null";

/// A range's bar: its lane, its depth there, its times relative to the trace's start.
fn bar(r: &Range<'_>, lane: usize, depth: usize, start: u64) -> Value {
    let pairs = text_args::parse(r.args);
    let name = match pairs.iter().find(|(k, _)| k == "label") {
        Some((_, label)) if r.range == "label" => label.clone(),
        _ => r.range.to_string(),
    };
    // Pairs, not an object: the tooltip lists them in the trace's order.
    let args: Vec<Value> = pairs.into_iter().map(|(k, v)| json!([k, v])).collect();
    json!({
        "lane": lane, "depth": depth, "name": name, "kind": r.range,
        "b": r.begin_ns.saturating_sub(start), "e": r.end_ns.max(r.begin_ns).saturating_sub(start),
        "batch": r.batch.number, "frame": r.batch.frame, "args": args,
    })
}

/// The page's data: lanes (in order of device, then queue), bars (every range of the
/// trace) and frame bands.
pub fn data(trace: &Trace, spec: &Spec) -> Value {
    let paired = pair(trace, spec);
    let start = paired.ranges.iter().map(|r| r.begin_ns).min().unwrap_or(0);
    let mut lanes: BTreeMap<(u32, Option<u64>), Vec<&Range<'_>>> = BTreeMap::new();
    for r in &paired.ranges {
        lanes
            .entry((r.batch.device, r.batch.queue))
            .or_default()
            .push(r);
    }
    let mut bars = Vec::new();
    let mut names = Vec::new();
    for (lane, ((device, queue), mut ranges)) in lanes.into_iter().enumerate() {
        let name = match queue {
            Some(q) => format!("device {device} queue {q:#x}"),
            None => format!("device {device}"),
        };
        names.push(json!({"name": name, "device": device}));
        // Outer ranges first: by begin, the longer first. A range goes on the first level
        // free at its begin: for properly nested ranges that is its nesting depth, and
        // ranges that cross (never on one queue) still never overlap on a level, which the
        // page's drawing and hovering rely on.
        ranges.sort_by_key(|r| (r.begin_ns, std::cmp::Reverse(r.end_ns)));
        let mut level_ends: Vec<u64> = Vec::new();
        for r in ranges {
            let end = r.end_ns.max(r.begin_ns);
            let depth = match level_ends.iter().position(|&e| e <= r.begin_ns) {
                Some(free) => free,
                None => {
                    level_ends.push(0);
                    level_ends.len() - 1
                }
            };
            level_ends[depth] = end;
            bars.push(bar(r, lane, depth, start));
        }
    }
    // A frame's band: from its first range's begin to its last range's end, per device.
    let mut frames: BTreeMap<(u32, u64), (u64, u64)> = BTreeMap::new();
    for r in &paired.ranges {
        let f = frames
            .entry((r.batch.device, r.batch.frame))
            .or_insert((u64::MAX, 0));
        f.0 = f.0.min(r.begin_ns);
        f.1 = f.1.max(r.end_ns.max(r.begin_ns));
    }
    let frames: Vec<Value> = frames
        .into_iter()
        .map(|((device, frame), (b, e))| json!({"device": device, "frame": frame, "b": b.saturating_sub(start), "e": e.saturating_sub(start)}))
        .collect();
    json!({"lanes": names, "bars": bars, "frames": frames})
}

/// The page with `trace`'s data in it.
pub fn page(trace: &Trace, spec: &Spec) -> String {
    // Inside a <script>: `</` would end it; JSON allows `<\\/`.
    let data = data(trace, spec).to_string().replace("</", "<\\/");
    PAGE.replacen(DATA_MARK, &data, 1)
}

/// `utrace view`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A trace the layer wrote (txt, json, csv or Perfetto).
    trace: PathBuf,
    /// The HTML file to write.
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    out: PathBuf,
}

pub fn run(args: &Args) -> Result<(), String> {
    let trace = crate::trace::load(&args.trace)?;
    let html = page(&trace, &Spec::built_in());
    crate::write_whole::write_whole(&args.out, html.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Batch, Event};

    fn ev(ns: u64, name: &str, args: &str) -> Event {
        Event::at(ns, name, args)
    }

    #[test]
    fn every_range_is_a_bar_at_its_nesting_depth() {
        let trace = Trace {
            batches: vec![Batch {
                queue: Some(0x10),
                events: vec![
                    ev(100, "start_cmd_buffer", "cmd=0x1"),
                    ev(110, "begin_label", "label=\"a </script> b\""),
                    ev(120, "start_draw", "vertex_count=3"),
                    ev(130, "end_draw", ""),
                    ev(140, "end_label", ""),
                    ev(150, "start_draw", "vertex_count=6"),
                    ev(160, "end_draw", ""),
                    ev(200, "end_cmd_buffer", "cmd=0x1"),
                ],
                ..Batch::default()
            }],
            notes: vec![],
        };
        let d = data(&trace, &Spec::built_in());
        let bars = d["bars"].as_array().unwrap();
        let got: Vec<(&str, u64, u64)> = bars
            .iter()
            .map(|b| {
                (
                    b["name"].as_str().unwrap(),
                    b["depth"].as_u64().unwrap(),
                    b["b"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("cmd_buffer", 0, 0),
                ("a </script> b", 1, 10),
                ("draw", 2, 20),
                ("draw", 1, 50)
            ]
        );
        assert_eq!(d["lanes"][0]["name"], "device 0 queue 0x10");
        assert_eq!(d["frames"][0]["e"], 100);
        let html = page(&trace, &Spec::built_in());
        assert!(!html.contains(DATA_MARK) && !html.contains("a </script> b"));
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "no network"
        );
    }

    /// Ranges that cross (batches of one queue that overlap in time) go on levels where
    /// they do not overlap; a level freed is taken again.
    #[test]
    fn crossing_ranges_never_share_a_level() {
        let batch = |number, b, e| Batch {
            number,
            queue: Some(1),
            events: vec![
                ev(b, "start_cmd_buffer", "cmd=0x1"),
                ev(e, "end_cmd_buffer", "cmd=0x1"),
            ],
            ..Batch::default()
        };
        let trace = Trace {
            batches: vec![
                batch(1, 0, 100),
                batch(2, 50, 150),
                batch(3, 120, 130),
                batch(4, 160, 170),
            ],
            notes: vec![],
        };
        let d = data(&trace, &Spec::built_in());
        let depths: Vec<u64> = d["bars"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["depth"].as_u64().unwrap())
            .collect();
        assert_eq!(depths, [0, 1, 0, 0]);
    }
}
