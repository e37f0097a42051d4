//! The nesting of a batch's events, shared by the formats: an end closes the innermost open
//! range of its name (and any left open inside it); an end whose begin is not in the batch
//! (a label opened in an earlier submission) closes nothing.

use crate::trace::tracepoints::{RangeKind, TracepointInfo};

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
