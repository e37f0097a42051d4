//! The page's counter tracks (`GPU_TRACE_COUNTERS=pipeline`): per lane, the innermost
//! counted ranges (a draw or dispatch, or a render pass whose draws were not counted; not
//! a command buffer or render pass whose inner ranges carry their own) with their
//! pipeline statistics, drawn under the lane as the page's chosen statistic.

use crate::analysis::counters::{Counted, NAMES};
use crate::analysis::ranges::Range;

/// `{names, lanes: [{lane, b: [...], d: [...], v: [[per range] per statistic]}]}` (times
/// in ns from `start`; a statistic a range does not show is 0), or `null` when no range
/// of `lanes` has statistics.
pub fn json(lanes: &[Vec<&Range<'_>>], start: u64) -> String {
    let mut tracks = Vec::new();
    for (lane, ranges) in lanes.iter().enumerate() {
        let inner = innermost(ranges);
        if inner.is_empty() {
            continue;
        }
        let b: Vec<u64> = inner.iter().map(|(r, _)| r.begin_ns - start).collect();
        let d: Vec<u64> = inner.iter().map(|(r, _)| r.duration()).collect();
        let v: Vec<Vec<u64>> = (0..NAMES.len())
            .map(|s| {
                inner
                    .iter()
                    .map(|(_, c)| c.values[s].unwrap_or(0))
                    .collect()
            })
            .collect();
        tracks.push(serde_json::json!({"lane": lane, "b": b, "d": d, "v": v}));
    }
    if tracks.is_empty() {
        return "null".into();
    }
    serde_json::json!({"names": NAMES, "lanes": tracks}).to_string()
}

/// The counted ranges of one lane that hold no other counted range, by begin. Ranges of a
/// batch nest, so sorted by begin (the longer first) a range holds another exactly when
/// the next one begins before it ends.
fn innermost<'r, 't>(ranges: &[&'r Range<'t>]) -> Vec<(&'r Range<'t>, Counted)> {
    let mut counted: Vec<(&Range<'_>, Counted)> = ranges
        .iter()
        .filter(|r| r.range != "cmd_buffer" && r.range != "label")
        .filter_map(|r| Some((*r, Counted::of(r)?)))
        .filter(|(_, c)| c.values.iter().any(Option::is_some))
        .collect();
    counted.sort_by_key(|(r, _)| {
        (
            r.batch as *const _ as usize,
            r.begin_ns,
            std::cmp::Reverse(r.end_ns),
        )
    });
    let mut inner = Vec::with_capacity(counted.len());
    for (i, &(r, c)) in counted.iter().enumerate() {
        let holds_next = counted
            .get(i + 1)
            .is_some_and(|(n, _)| std::ptr::eq(n.batch, r.batch) && n.begin_ns < r.end_ns);
        if !holds_next {
            inner.push((r, c));
        }
    }
    inner.sort_by_key(|(r, _)| r.begin_ns);
    inner
}
