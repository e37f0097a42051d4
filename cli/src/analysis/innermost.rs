//! The innermost of a set of ranges: those that hold no other of the set. A label's
//! counters are those of its innermost counted ranges (a render pass whose draws are
//! counted sums them, so counting both would count the draws twice), and a counter track
//! draws them.

use crate::analysis::ranges::Range;

/// The items of `counted` whose range holds no other's, by begin. Ranges of a batch nest,
/// so sorted by begin (the longer first) a range holds another exactly when the next one
/// begins before it ends.
pub fn innermost<'r, 't, T>(mut counted: Vec<(&'r Range<'t>, T)>) -> Vec<(&'r Range<'t>, T)> {
    counted.sort_by_key(|(r, _)| {
        (
            r.batch as *const _ as usize,
            r.begin_ns,
            std::cmp::Reverse(r.end_ns),
        )
    });
    let holds_next: Vec<bool> = counted
        .windows(2)
        .map(|w| std::ptr::eq(w[1].0.batch, w[0].0.batch) && w[1].0.begin_ns < w[0].0.end_ns)
        .chain([false])
        .collect();
    let mut inner: Vec<(&Range<'_>, T)> = counted
        .into_iter()
        .zip(holds_next)
        .filter(|(_, holds)| !holds)
        .map(|(item, _)| item)
        .collect();
    inner.sort_by_key(|(r, _)| r.begin_ns);
    inner
}
