//! Ranges: each begin event paired with its end, by the tracepoint spec the layer was built
//! from (`tracepoints/tracepoints.toml`: which tracepoints begin or end which range).

use std::collections::HashMap;

use utrace_format::RangeKind;

use crate::trace::{Batch, Trace};

/// One range of GPU time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range<'t> {
    /// The range's name in the spec (`draw`, `render_pass`, `label`, ...).
    pub range: &'t str,
    pub begin_ns: u64,
    pub end_ns: u64,
    /// The begin event's arguments.
    pub args: &'t str,
    /// The end event's arguments (pipeline statistics, with `GPU_TRACE_COUNTERS`).
    pub end_args: &'t str,
    pub batch: &'t Batch,
}

impl Range<'_> {
    pub fn duration(&self) -> u64 {
        self.end_ns.saturating_sub(self.begin_ns)
    }
}

/// Which range each tracepoint begins or ends.
pub struct Spec {
    kinds: HashMap<String, (RangeKind, String)>,
}

impl Spec {
    /// The spec this build of utrace was made with.
    pub fn built_in() -> Spec {
        Spec {
            kinds: crate::tracepoint_spec::built_in()
                .tracepoints
                .into_iter()
                .map(|t| (t.name, (t.kind, t.range)))
                .collect(),
        }
    }
}

impl Spec {
    /// Whether tracepoint `name` begins or ends a range, or marks a point.
    pub fn kind(&self, name: &str) -> Option<RangeKind> {
        self.kinds.get(name).map(|(k, _)| *k)
    }
}

/// What pairing found: the ranges, and the events that did not pair.
pub struct Paired<'t> {
    pub ranges: Vec<Range<'t>>,
    /// Begins never ended in their batch, ends never begun, names the spec does not know.
    pub unpaired: u64,
}

/// Pairs each batch's begins and ends (the innermost open begin of the same range).
pub fn pair<'t>(trace: &'t Trace, spec: &'t Spec) -> Paired<'t> {
    let mut ranges = Vec::new();
    let mut unpaired = 0;
    for batch in &trace.batches {
        let mut open: Vec<(&'t str, u64, &'t str)> = Vec::new();
        for e in &batch.events {
            match spec.kinds.get(&e.name) {
                Some((RangeKind::Begin, range)) => {
                    open.push((range.as_str(), e.ns, e.args.as_str()))
                }
                Some((RangeKind::End, range)) => match open.iter().rposition(|o| o.0 == range) {
                    Some(at) => {
                        let (range, begin_ns, args) = open.remove(at);
                        ranges.push(Range {
                            range,
                            begin_ns,
                            end_ns: e.ns,
                            args,
                            end_args: e.args.as_str(),
                            batch,
                        });
                    }
                    None => unpaired += 1,
                },
                Some(_) => {}
                None => unpaired += 1,
            }
        }
        unpaired += open.len() as u64;
    }
    Paired { ranges, unpaired }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Event;

    fn ev(ns: u64, name: &str) -> Event {
        Event::at(ns, name, "")
    }

    #[test]
    fn nested_ranges_pair_innermost_first() {
        let trace = Trace {
            batches: vec![Batch {
                events: vec![
                    ev(0, "start_cmd_buffer"),
                    ev(10, "begin_label"),
                    ev(20, "begin_label"),
                    ev(30, "start_draw"),
                    ev(35, "end_draw"),
                    ev(40, "end_label"),
                    ev(50, "end_label"),
                    ev(60, "insert_label"),
                    ev(70, "end_draw"),
                    ev(100, "end_cmd_buffer"),
                ],
                ..Batch::default()
            }],
            origins: Vec::new(),
            notes: vec![],
        };
        let spec = Spec::built_in();
        let p = pair(&trace, &spec);
        let got: Vec<(&str, u64, u64)> = p
            .ranges
            .iter()
            .map(|r| (r.range, r.begin_ns, r.end_ns))
            .collect();
        assert_eq!(
            got,
            [
                ("draw", 30, 35),
                ("label", 20, 40),
                ("label", 10, 50),
                ("cmd_buffer", 0, 100)
            ]
        );
        assert_eq!(p.unpaired, 1, "the second end_draw");
    }
}
