//! A wrapped submission's segments (see `gpu::queue_context`): per segment, every query it
//! writes (to re-arm) and reads (to copy, at its slot in the batch's readback: each
//! execution's region follows the previous ones, depth first, and the pipeline statistics
//! of reusable traces follow all the timestamps, in the order of the traces). Built into
//! lists each submitting thread keeps, so that a resubmission allocates nothing.

use std::cell::RefCell;
use std::sync::Arc;

use crate::gpu::interface::{CopyRange, QueryRange, Segment};
use crate::trace::record::recorded_trace::RecordedTrace;

/// Segments handed to the recording on the stack; a submission with more (a command buffer
/// run more than three times in one call) takes an allocation.
const INLINE_SEGMENTS: usize = 4;

#[derive(Default)]
pub struct SegmentLists {
    resets: Vec<QueryRange>,
    copies: Vec<CopyRange>,
    /// Where each segment's resets and copies end.
    ends: Vec<(usize, usize)>,
    /// Readback slots of all segments.
    total: u32,
}

thread_local! {
    static LISTS: RefCell<SegmentLists> = RefCell::default();
}

impl SegmentLists {
    /// Runs `f` on this thread's lists, filled from `traces` cut at `segment_starts` (the
    /// position in `traces` where each segment after the first starts).
    pub fn with<R>(
        traces: &[Arc<RecordedTrace>],
        segment_starts: &[usize],
        f: impl FnOnce(&SegmentLists) -> R,
    ) -> R {
        LISTS.with_borrow_mut(|lists| {
            lists.fill(traces, segment_starts);
            f(lists)
        })
    }

    fn fill(&mut self, traces: &[Arc<RecordedTrace>], segment_starts: &[usize]) {
        self.resets.clear();
        self.copies.clear();
        self.ends.clear();
        // The statistics copied go after every timestamp, in the order of the traces.
        let mut statistics = timestamps(traces);
        let mut total = 0u32;
        let mut start = 0;
        for end in segment_starts.iter().copied().chain([traces.len()]) {
            for trace in &traces[start..end] {
                trace.visit(&mut |t| {
                    self.resets.extend_from_slice(&t.chunks);
                    self.copies.extend(t.copies.iter().map(|copy| CopyRange {
                        slot: copy.slot + total,
                        ..*copy
                    }));
                    total += t.slots;
                });
                if let Some((pool, count, values)) = trace.copied_statistics() {
                    self.copies.push(CopyRange {
                        pool,
                        first: 0,
                        count,
                        slot: statistics,
                        values,
                    });
                    statistics += count * values;
                }
            }
            self.ends.push((self.resets.len(), self.copies.len()));
            start = end;
        }
        self.total = statistics;
    }

    /// The readback slots the segments need.
    pub fn total(&self) -> u32 {
        self.total
    }

    /// Runs `f` on the segments.
    pub fn segments<R>(&self, f: impl FnOnce(&[Segment<'_>]) -> R) -> R {
        let mut starts = (0, 0);
        let segments = self.ends.iter().map(|&(r, c)| {
            let segment = Segment {
                resets: &self.resets[starts.0..r],
                copies: &self.copies[starts.1..c],
            };
            starts = (r, c);
            segment
        });
        if self.ends.len() <= INLINE_SEGMENTS {
            let mut inline = [Segment {
                resets: &[],
                copies: &[],
            }; INLINE_SEGMENTS];
            for (slot, segment) in inline.iter_mut().zip(segments) {
                *slot = segment;
            }
            f(&inline[..self.ends.len()])
        } else {
            f(&segments.collect::<Vec<_>>())
        }
    }
}

/// The timestamps `traces` (and the secondaries they execute) write: the readback slots
/// before the statistics the layer copies.
pub fn timestamps(traces: &[Arc<RecordedTrace>]) -> u32 {
    let mut total = 0u32;
    for trace in traces {
        trace.visit(&mut |t| total += t.slots);
    }
    total
}
