//! Hardware counters in a trace (`GPU_TRACE_COUNTERS=perf:NAME,...`: the layer writes each
//! as `perf_<name>=V` on a counted range's end event), per group of ranges for
//! `utrace report --counters`: each counter's sum and its mean per counted range.
//!
//! A trace does not say a counter's unit, so both are kept: a sum means something for
//! counts (draws, bytes), a mean for rates and percentages ("GPU busy"). A label's
//! counters are those of the counted ranges inside it (see `counted_groups`).

use std::collections::BTreeMap;

use utrace_format::{text_args, PERF_PREFIX};

use crate::analysis::counted_groups::each_group;
use crate::analysis::groups::By;
use crate::analysis::ranges::{Paired, Range};

/// One range's hardware counters: (key, value), in the order the layer wrote them. On its
/// end event in the text formats; among its arguments in a Perfetto stage's `extra_data`.
pub fn of(r: &Range<'_>) -> Vec<(String, f64)> {
    text_args::parse(r.args)
        .into_iter()
        .chain(text_args::parse(r.end_args))
        .filter(|(k, _)| k.starts_with(PERF_PREFIX))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

/// One counter of a group: the sum of its values, and how many ranges showed it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Total {
    pub sum: f64,
    pub ranges: u64,
}

impl Total {
    pub fn mean(&self) -> Option<f64> {
        (self.ranges > 0).then(|| self.sum / self.ranges as f64)
    }
}

/// A group's counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HwRow {
    pub key: String,
    /// Ranges with hardware counters.
    pub ranges: u64,
    /// Each counter's total, in [`keys`]' order.
    pub totals: Vec<Total>,
    /// The group's ranges' GPU time.
    pub total_ns: u64,
}

impl HwRow {
    fn add(&mut self, keys: &[String], values: &[(String, f64)], duration: u64) {
        self.ranges += 1;
        self.total_ns += duration;
        self.totals.resize(keys.len(), Total::default());
        for (k, v) in values {
            if let Some(i) = keys.iter().position(|key| key == k) {
                self.totals[i].sum += v;
                self.totals[i].ranges += 1;
            }
        }
    }
}

/// The hardware counters' keys in the trace, in the order its first counted range shows
/// them.
pub fn keys(paired: &Paired<'_>) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for r in &paired.ranges {
        for (k, _) in of(r) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys
}

/// The groups (under `by`) with hardware counters, the most GPU time first (nothing when
/// the trace has none).
pub fn rows(paired: &Paired<'_>, by: By) -> (Vec<String>, Vec<HwRow>) {
    let keys = keys(paired);
    if keys.is_empty() {
        return (keys, Vec::new());
    }
    let counted: Vec<(&Range<'_>, Vec<(String, f64)>)> = paired
        .ranges
        .iter()
        .map(|r| (r, of(r)))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let mut groups: BTreeMap<String, HwRow> = BTreeMap::new();
    each_group(paired, by, &counted, |key, _, inside| {
        // Each counted range, a label's too, counts as a range of the group.
        let row = groups.entry(key.clone()).or_insert_with(|| HwRow {
            key,
            ..HwRow::default()
        });
        for (c, values) in inside {
            row.add(&keys, values, c.duration());
        }
    });
    let mut rows: Vec<HwRow> = groups.into_values().collect();
    rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.key.cmp(&b.key)));
    (keys, rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ranges::{pair, Spec};
    use crate::trace::{Batch, Event, Trace};

    /// A label around two render passes (2 and 3 draws), then a third pass (1 draw) and the
    /// command buffer's own counters.
    fn trace() -> Trace {
        Trace {
            batches: vec![Batch {
                events: vec![
                    Event::at(0, "start_cmd_buffer", ""),
                    Event::at(0, "begin_label", "label=\"scene\""),
                    Event::at(10, "start_render_pass", ""),
                    Event::at(110, "end_render_pass", "perf_draws=2, perf_gpu_busy=50"),
                    Event::at(120, "start_render_pass", ""),
                    Event::at(220, "end_render_pass", "perf_draws=3, perf_gpu_busy=100"),
                    Event::at(230, "end_label", ""),
                    Event::at(240, "start_render_pass", ""),
                    Event::at(340, "end_render_pass", "perf_draws=1, perf_gpu_busy=12.5"),
                    Event::at(400, "end_cmd_buffer", "cmd=0x1"),
                ],
                ..Batch::default()
            }],
            origins: Vec::new(),
            notes: vec![],
        }
    }

    #[test]
    fn groups_sum_and_average_each_counter_and_labels_take_the_ranges_inside() {
        let trace = trace();
        let spec = Spec::built_in();
        let paired = pair(&trace, &spec);
        let (keys, by_kind) = rows(&paired, By::Tracepoint);
        assert_eq!(keys, ["perf_draws", "perf_gpu_busy"]);
        // The passes, and the label (its passes' counters).
        let groups: Vec<(&str, u64)> = by_kind.iter().map(|r| (r.key.as_str(), r.ranges)).collect();
        assert_eq!(groups, [("render_pass", 3), ("label", 2)]);
        let pass = &by_kind[0];
        assert_eq!((pass.key.as_str(), pass.ranges), ("render_pass", 3));
        assert_eq!(pass.totals[0].sum, 6.0);
        assert_eq!(pass.totals[1].mean(), Some(162.5 / 3.0));
        let (_, by_label) = rows(&paired, By::Label);
        assert_eq!(by_label.len(), 1);
        assert_eq!((by_label[0].key.as_str(), by_label[0].ranges), ("scene", 2));
        assert_eq!(by_label[0].totals[0].sum, 5.0);
        assert_eq!(by_label[0].totals[1].mean(), Some(75.0));
    }

    #[test]
    fn a_trace_without_hardware_counters_has_no_rows() {
        let trace = Trace {
            batches: vec![Batch {
                events: vec![
                    Event::at(0, "start_dispatch", ""),
                    Event::at(10, "end_dispatch", "compute_invocations=64"),
                ],
                ..Batch::default()
            }],
            notes: vec![],
            origins: Vec::new(),
        };
        let spec = Spec::built_in();
        let paired = pair(&trace, &spec);
        assert_eq!(rows(&paired, By::Tracepoint), (vec![], vec![]));
    }
}
