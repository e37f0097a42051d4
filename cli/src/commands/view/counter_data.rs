//! The page's counter tracks (`GPU_TRACE_COUNTERS=pipeline`, or `perf:NAME,...`): per lane,
//! the innermost counted ranges (a draw or dispatch, or a render pass whose draws were not
//! counted; not a command buffer or render pass whose inner ranges carry their own) with
//! their counters, drawn under the lane as the page's chosen counter. Pipeline statistics
//! where the trace has them, else hardware counters (on render passes, or on command
//! buffers where a counter of command-buffer scope made them the counted ranges).

use crate::analysis::counters::{Counted, NAMES};
use crate::analysis::hardware_counters;
use crate::analysis::ranges::Range;

/// `{names, lanes: [{lane, b: [...], d: [...], v: [[per range] per counter]}]}` (times in
/// ns from `start`; a counter a range does not show is 0), or `null` when no range of
/// `lanes` has counters.
pub fn json(lanes: &[Vec<&Range<'_>>], start: u64) -> String {
    let statistics = tracks(lanes, start, NAMES.len(), |r| {
        if r.range == "cmd_buffer" {
            return None;
        }
        let c = Counted::of(r).filter(|c| c.values.iter().any(Option::is_some))?;
        Some(c.values.map(|v| v.unwrap_or(0) as f64).to_vec())
    });
    if !statistics.is_empty() {
        return serde_json::json!({"names": NAMES, "lanes": statistics}).to_string();
    }
    let keys: Vec<String> = {
        let mut keys = Vec::new();
        for (k, _) in lanes
            .iter()
            .flatten()
            .flat_map(|r| hardware_counters::of(r))
        {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        keys
    };
    let hardware = tracks(lanes, start, keys.len(), |r| {
        let values = hardware_counters::of(r);
        (!values.is_empty()).then(|| {
            keys.iter()
                .map(|k| values.iter().find(|(n, _)| n == k).map_or(0.0, |v| v.1))
                .collect()
        })
    });
    if hardware.is_empty() {
        return "null".into();
    }
    serde_json::json!({"names": keys, "lanes": hardware}).to_string()
}

/// Each lane's track of its innermost ranges that `values` gives `counters` values for.
fn tracks(
    lanes: &[Vec<&Range<'_>>],
    start: u64,
    counters: usize,
    values: impl Fn(&Range<'_>) -> Option<Vec<f64>>,
) -> Vec<serde_json::Value> {
    let mut tracks = Vec::new();
    for (lane, ranges) in lanes.iter().enumerate() {
        let inner = innermost(ranges, &values);
        if inner.is_empty() {
            continue;
        }
        let b: Vec<u64> = inner.iter().map(|(r, _)| r.begin_ns - start).collect();
        let d: Vec<u64> = inner.iter().map(|(r, _)| r.duration()).collect();
        let v: Vec<Vec<f64>> = (0..counters)
            .map(|s| inner.iter().map(|(_, c)| c[s]).collect())
            .collect();
        tracks.push(serde_json::json!({"lane": lane, "b": b, "d": d, "v": v}));
    }
    tracks
}

/// The counted ranges of one lane that hold no other counted range, by begin.
fn innermost<'r, 't>(
    ranges: &[&'r Range<'t>],
    values: impl Fn(&Range<'_>) -> Option<Vec<f64>>,
) -> Vec<(&'r Range<'t>, Vec<f64>)> {
    let counted: Vec<(&Range<'_>, Vec<f64>)> = ranges
        .iter()
        .filter(|r| r.range != "label")
        .filter_map(|r| Some((*r, values(r)?)))
        .collect();
    crate::analysis::innermost::innermost(counted)
}
