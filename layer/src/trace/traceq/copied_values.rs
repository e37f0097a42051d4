//! A wrapped batch's readback as traceq reads it: its timestamps, then the pipeline
//! statistics the layer's copies read of its reusable traces, in the order of its traces
//! (see `submit::segment_lists`).

use std::cell::Cell;
use std::sync::Arc;

use super::events::Timestamps;
use crate::trace::record::recorded_trace::RecordedTrace;

/// The readback's values, and where each trace's statistics are in it.
pub struct CopiedValues<'v> {
    values: &'v [u64],
    /// Per copy, in the order of the traces: the trace, where its values start, how many,
    /// and whether a range took them (a trace run twice in the batch has two).
    regions: Vec<(*const RecordedTrace, usize, usize, Cell<bool>)>,
}

impl<'v> CopiedValues<'v> {
    /// `values` of a batch of `traces` whose timestamps take the first `timestamps`.
    pub fn new(values: &'v [u64], traces: &[Arc<RecordedTrace>], timestamps: u32) -> Self {
        let mut at = timestamps as usize;
        let regions = traces
            .iter()
            .filter_map(|t| {
                let (_, count, per_query) = t.copied_statistics()?;
                let len = (count * per_query) as usize;
                at += len;
                Some((Arc::as_ptr(t), at - len, len, Cell::new(false)))
            })
            .collect();
        CopiedValues { values, regions }
    }

    /// The values a readback of the batch holds: timestamps and statistics.
    pub fn total(traces: &[Arc<RecordedTrace>], timestamps: u32) -> u32 {
        let statistics: u32 = traces
            .iter()
            .filter_map(|t| t.copied_statistics())
            .map(|(_, count, per_query)| count * per_query)
            .sum();
        timestamps + statistics
    }
}

impl Timestamps for CopiedValues<'_> {
    fn at(&mut self, index: usize) -> Option<u64> {
        self.values.get(index).copied()
    }

    /// The trace's next region not yet taken (its runs in the batch come in order).
    fn run_statistics(&self, trace: &RecordedTrace) -> Option<&[u64]> {
        let (_, start, len, taken) = self
            .regions
            .iter()
            .find(|(t, _, _, taken)| std::ptr::eq(*t, trace) && !taken.get())?;
        taken.set(true);
        self.values.get(*start..start + len)
    }
}
