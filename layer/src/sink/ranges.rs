//! The nesting of a batch's events, shared by the formats: an end closes the innermost open
//! range of its name (and any left open inside it); an end whose begin is not in the batch
//! (a label opened in an earlier submission) closes nothing.

use crate::trace::sink_interface::{Event, EventPieces};
use crate::trace::tracepoints::{RangeKind, TracepointInfo};

/// Calls `f` with each event of `events` in order, the depth it prints at and its delta to
/// the event before (0 for the first): the walk every text format makes over a batch.
pub fn each_placed<'a>(
    events: &mut dyn EventPieces<'a>,
    mut f: impl FnMut(&Event<'a>, usize, i64),
) {
    let mut ranges = Ranges::default();
    let mut prev = events.first_last_ns().0;
    events.each_piece(&mut |piece| {
        for e in piece {
            let depth = ranges.depth(e.info());
            let delta = e.ns.wrapping_sub(prev) as i64;
            prev = e.ns;
            f(e, depth, delta);
        }
    });
}

#[derive(Default)]
pub struct Ranges {
    open: Vec<&'static str>,
}

impl Ranges {
    /// The depth `info`'s event prints at; updates the open ranges.
    pub fn depth(&mut self, info: &'static TracepointInfo) -> usize {
        if info.kind == RangeKind::End {
            if let Some(at) = self.open.iter().rposition(|r| *r == info.range) {
                self.open.truncate(at);
            }
        }
        let depth = self.open.len();
        if info.kind == RangeKind::Begin {
            self.open.push(info.range);
        }
        depth
    }
}
