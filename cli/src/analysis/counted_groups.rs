//! Which counted ranges each group (under `--by`) holds, for the counter tables of
//! pipeline statistics and of hardware counters alike: a counted range is in its own
//! group; a label's group takes the innermost counted ranges inside it (the same batch,
//! between its begin and end; not a command buffer's, which holds more than the label).

use crate::analysis::groups::{key, By};
use crate::analysis::innermost::innermost;
use crate::analysis::ranges::{Paired, Range};

/// Calls `each(key, range, counted)` for every range of `paired` with a group under `by`
/// that counted something: a counted range with itself, a label with the innermost counted
/// ranges inside it. `counted`: the ranges with counters, and their values.
pub fn each_group<'r, 't, T>(
    paired: &'r Paired<'t>,
    by: By,
    counted: &'r [(&'r Range<'t>, T)],
    mut each: impl FnMut(String, &'r Range<'t>, Vec<(&'r Range<'t>, &'r T)>),
) {
    for (c, values) in counted.iter().filter(|(c, _)| c.range != "label") {
        if let Some(key) = key(c, by) {
            each(key, c, vec![(*c, values)]);
        }
    }
    for label in paired.ranges.iter().filter(|r| r.range == "label") {
        let Some(key) = key(label, by) else {
            continue;
        };
        let inside: Vec<(&Range<'_>, &T)> = counted
            .iter()
            .filter(|(c, _)| {
                c.range != "cmd_buffer"
                    && std::ptr::eq(c.batch, label.batch)
                    && c.begin_ns >= label.begin_ns
                    && c.end_ns <= label.end_ns
            })
            .map(|(c, v)| (*c, v))
            .collect();
        if !inside.is_empty() {
            each(key, label, innermost(inside));
        }
    }
}
