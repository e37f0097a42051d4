//! Pipeline statistics in a trace (`GPU_TRACE_COUNTERS=pipeline`: the layer writes them
//! on a range's end event), summed per group of ranges for `utrace report --counters`,
//! with rates derived from them and the group's GPU time.
//!
//! A label's counters are the sums of the counted ranges inside it (the layer counts
//! render passes and dispatches, not labels): the innermost counted ranges of the same
//! batch between its begin and end (a render pass whose draws are counted sums them, and
//! a command buffer its own: neither is added again).

use std::collections::BTreeMap;

use utrace_format::text_args;

use crate::analysis::counted_groups::each_group;
use crate::analysis::groups::By;
use crate::analysis::ranges::{Paired, Range};

/// The statistics' names, as the layer writes them.
pub use utrace_format::COUNTER_NAMES as NAMES;

/// One range's statistics: each value it shows, and whether an application's own query
/// overlapped it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    pub values: [Option<u64>; NAMES.len()],
    pub partial: bool,
}

impl Counted {
    /// The statistics on `r`'s end event (the text formats), or among its arguments (a
    /// Perfetto stage's `extra_data`), if it has any.
    pub fn of(r: &Range<'_>) -> Option<Counted> {
        let mut c = Counted::default();
        let mut any = false;
        let args = text_args::parse(r.args).into_iter();
        for (name, value) in args.chain(text_args::parse(r.end_args)) {
            if name == "partial" {
                c.partial = value == "1";
                any = true;
            } else if let Some(i) = NAMES.iter().position(|n| *n == name) {
                c.values[i] = value.parse().ok();
                any = true;
            }
        }
        any.then_some(c)
    }
}

/// A group's sums.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    pub key: String,
    /// Ranges with statistics (measured at least in part), and ranges marked partial.
    pub ranges: u64,
    pub partial: u64,
    /// Each statistic's sum, `None` where no range of the group shows it.
    pub sums: [Option<u64>; NAMES.len()],
    /// The group's ranges' GPU time.
    pub total_ns: u64,
}

impl Row {
    fn add(&mut self, c: &Counted, duration: u64) {
        self.partial += u64::from(c.partial);
        if c.values.iter().all(Option::is_none) {
            // Not measured at all (an application's own query covered it): only noted.
            return;
        }
        self.ranges += 1;
        self.total_ns += duration;
        for (s, v) in self.sums.iter_mut().zip(c.values) {
            if let Some(v) = v {
                *s = Some(s.unwrap_or(0) + v);
            }
        }
    }

    /// Fragment shader invocations per µs of the group's GPU time.
    pub fn fragments_per_us(&self) -> Option<f64> {
        let f = self.sums[5]?;
        (self.total_ns > 0).then(|| f as f64 * 1000.0 / self.total_ns as f64)
    }

    /// µs of the group's GPU time per 1,000 input primitives.
    pub fn us_per_1000_primitives(&self) -> Option<f64> {
        let p = self.sums[1].filter(|&p| p > 0)?;
        Some(self.total_ns as f64 / 1000.0 / (p as f64 / 1000.0))
    }

    /// Compute shader invocations per range (per dispatch, for dispatches).
    pub fn invocations_per_range(&self) -> Option<f64> {
        let c = self.sums[6]?;
        (self.ranges > 0).then(|| c as f64 / self.ranges as f64)
    }
}

/// The groups (under `by`) with statistics, the most GPU time first.
pub fn rows(paired: &Paired<'_>, by: By) -> Vec<Row> {
    let mut groups: BTreeMap<String, Row> = BTreeMap::new();
    let counted: Vec<(&Range<'_>, Counted)> = paired
        .ranges
        .iter()
        .filter_map(|r| Counted::of(r).map(|c| (r, c)))
        .collect();
    each_group(paired, by, &counted, |key, range, inside| {
        // A label's values are the sum of its counted ranges, over its own duration.
        let mut sum = Counted::default();
        for (_, c) in inside {
            sum.partial |= c.partial;
            for (s, v) in sum.values.iter_mut().zip(c.values) {
                if let Some(v) = v {
                    *s = Some(s.unwrap_or(0) + v);
                }
            }
        }
        groups
            .entry(key.clone())
            .or_insert_with(|| Row {
                key,
                ..Row::default()
            })
            .add(&sum, range.duration());
    });
    let mut rows: Vec<Row> = groups.into_values().collect();
    rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.key.cmp(&b.key)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ranges::{pair, Spec};
    use crate::trace::{Batch, Event, Trace};

    /// A command buffer with a label around a render pass (24 vertices) and a dispatch
    /// (960 invocations), and a dispatch of 64 outside it.
    fn trace() -> Trace {
        let rp = "input_vertices=24, input_primitives=8, vertex_invocations=24, clipping_invocations=8, clipping_primitives=8, fragment_invocations=7552";
        Trace {
            batches: vec![Batch {
                events: vec![
                    Event::at(0, "start_cmd_buffer", ""),
                    Event::at(0, "begin_label", "label=\"scene\""),
                    Event::at(10, "start_render_pass", ""),
                    Event::at(1010, "end_render_pass", rp),
                    Event::at(1020, "start_dispatch", ""),
                    Event::at(1120, "end_dispatch", "compute_invocations=960"),
                    Event::at(1130, "end_label", ""),
                    Event::at(1140, "start_dispatch", ""),
                    Event::at(1160, "end_dispatch", "compute_invocations=64, partial=1"),
                    Event::at(1200, "end_cmd_buffer", "cmd=0x1, input_vertices=24, input_primitives=8, vertex_invocations=24, clipping_invocations=8, clipping_primitives=8, fragment_invocations=7552, compute_invocations=1024, partial=1"),
                ],
                ..Batch::default()
            }],
            origins: Vec::new(),
            notes: vec![],
        }
    }

    #[test]
    fn groups_sum_their_ranges_and_labels_the_ranges_inside_them() {
        let trace = trace();
        let spec = Spec::built_in();
        let paired = pair(&trace, &spec);
        let by_kind = rows(&paired, By::Tracepoint);
        let find = |rows: &[Row], k: &str| rows.iter().find(|r| r.key == k).cloned().unwrap();
        let dispatch = find(&by_kind, "dispatch");
        assert_eq!((dispatch.ranges, dispatch.partial), (2, 1));
        assert_eq!(dispatch.sums[6], Some(1024));
        assert_eq!(dispatch.sums[5], None, "a dispatch shows no fragments");
        assert_eq!(dispatch.invocations_per_range(), Some(512.0));
        let pass = find(&by_kind, "render_pass");
        assert_eq!(pass.sums[2], Some(24));
        // 7552 fragments in 1 µs; 1 µs for 8 primitives: 125 µs per 1,000.
        assert_eq!(pass.fragments_per_us(), Some(7552.0));
        assert_eq!(pass.us_per_1000_primitives(), Some(125.0));
        assert_eq!(find(&by_kind, "cmd_buffer").sums[6], Some(1024));
        // The label: its render pass and its dispatch, not the one after it.
        let by_label = rows(&paired, By::Label);
        assert_eq!(by_label.len(), 1);
        assert_eq!(by_label[0].key, "scene");
        assert_eq!(
            (by_label[0].sums[2], by_label[0].sums[6]),
            (Some(24), Some(960))
        );
        assert_eq!(by_label[0].partial, 0);
    }

    #[test]
    fn a_label_around_a_pass_whose_draws_are_counted_sums_the_draws_once() {
        // The demo's "scene": a pass of two counted draws (3 and 6 vertices), the pass
        // their sum.
        let draw = |v: u32| format!("input_vertices={v}, vertex_invocations={v}");
        let trace = Trace {
            batches: vec![Batch {
                events: vec![
                    Event::at(0, "begin_label", "label=\"scene\""),
                    Event::at(10, "start_render_pass", ""),
                    Event::at(20, "start_draw", ""),
                    Event::at(30, "end_draw", &draw(3)),
                    Event::at(40, "start_draw", ""),
                    Event::at(50, "end_draw", &draw(6)),
                    Event::at(60, "end_render_pass", &draw(9)),
                    Event::at(70, "end_label", ""),
                ],
                ..Batch::default()
            }],
            origins: Vec::new(),
            notes: vec![],
        };
        let spec = Spec::built_in();
        let paired = pair(&trace, &spec);
        let by_label = rows(&paired, By::Label);
        assert_eq!(by_label[0].sums[0], Some(9), "{by_label:?}");
        assert_eq!(by_label[0].ranges, 1, "one label");
    }
}
