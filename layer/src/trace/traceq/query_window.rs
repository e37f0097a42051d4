//! The timestamps of a batch whose queries hold them (one-time command buffers, tracked
//! reusable runs: `Results::InQueries`), read a query chunk at a time as its events ask for
//! them: the traceq thread holds a few chunks' values whatever the batch. (A list of the
//! whole batch's values took 8 bytes a timestamp: 16 MB for a million draws.)
//!
//! The first chunks (one window is left for the last event's, which the sinks ask for
//! first) are read before any event is handed on, so that a batch whose queries cannot be
//! read (a lost device) is dropped whole rather than written in part; the others as the
//! events reach them, so that each chunk is read once (the last event's twice). (Reading every chunk first read a large batch twice: on Lavapipe, whose reads cost
//! 40 ns a query, that was half of traceq's time for a million one-time draws.) A read that
//! fails later leaves the events it holds out, counted.

use std::sync::Arc;

use ash::vk;

use super::events::Timestamps;
use crate::gpu::interface::CopyRange;
use crate::trace::record::recorded_trace::{Quiet, RecordedTrace};

/// Chunks' values held at once. Events go through a trace's queries in order, except
/// where a secondary's events are spliced in (its queries lie after its parent's) and
/// across a multiview pass: a few windows cover going there and back.
const WINDOWS: usize = 4;

/// The thread's storage for reading batches, kept from one batch to the next.
#[derive(Default)]
pub struct QueryScratch {
    /// The runs of the batch's tracked traces, read whole (a run is read once: see
    /// [`RecordedTrace::read_run`]); at most 256 values each.
    tracked: Vec<u64>,
    windows: [Window; WINDOWS],
}

struct Window {
    /// The readback index of `values[0]`.
    lo: usize,
    values: Vec<u64>,
}

impl Window {
    /// Holds nothing (keeps its room).
    fn clear(&mut self) {
        self.lo = usize::MAX;
        self.values.clear();
    }
}

impl Default for Window {
    fn default() -> Self {
        Window {
            lo: usize::MAX,
            values: Vec::new(),
        }
    }
}

/// A trace's region of the batch's readback.
struct Region<'a> {
    base: usize,
    slots: usize,
    source: Source<'a>,
}

enum Source<'a> {
    /// Its own queries (not its children's: they have regions of their own).
    Queries(&'a RecordedTrace),
    /// A tracked run, at this offset of [`QueryScratch::tracked`] (its timestamps, then
    /// its pipeline statistics if its slot holds them).
    Tracked(usize, &'a RecordedTrace),
}

/// Reads one of a trace's copy ranges (`RecordedTrace::read_copy`; a stand-in in tests).
pub trait ReadCopy:
    FnMut(&RecordedTrace, &CopyRange, &mut [u64]) -> Result<(), vk::Result>
{
}
impl<R: FnMut(&RecordedTrace, &CopyRange, &mut [u64]) -> Result<(), vk::Result>> ReadCopy for R {}

pub struct QueryTimestamps<'a, 's, R> {
    regions: Vec<Region<'a>>,
    scratch: &'s mut QueryScratch,
    read: R,
    /// The window the next read replaces.
    next: usize,
    /// A read that failed after the batch was found readable (never expected).
    pub failed: Option<vk::Result>,
}

impl<'a, 's, R: ReadCopy> QueryTimestamps<'a, 's, R> {
    /// The timestamps of `traces`, run by the device's `submission`, laid out as the
    /// readback of a copy would be (each trace's region after the previous one's, depth
    /// first). Reads the first chunks: an error means the batch cannot be read.
    /// `quiet`: the device's newer work, waited for before a tracked run is read where the
    /// read would wait for it (see `RecordedTrace::read_run`).
    pub fn new(
        (traces, submission): (&'a [Arc<RecordedTrace>], u64),
        scratch: &'s mut QueryScratch,
        read: R,
        quiet: &mut dyn Quiet,
    ) -> Result<Self, vk::Result> {
        scratch.tracked.clear();
        for w in &mut scratch.windows {
            w.clear();
        }
        let mut regions = Vec::new();
        let mut base = 0usize;
        let mut outcome = Ok(());
        for trace in traces {
            if trace.tracked() {
                // Read even after a failure: reading a run is what hands it back.
                let at = scratch.tracked.len();
                let slots = trace.slots as usize;
                scratch.tracked.resize(at + trace.run_values(), 0);
                outcome =
                    outcome.and(trace.read_run(submission, &mut scratch.tracked[at..], quiet));
                regions.push(Region {
                    base,
                    slots,
                    source: Source::Tracked(at, trace),
                });
                base += slots;
                continue;
            }
            trace.visit(&mut |t| {
                regions.push(Region {
                    base,
                    slots: t.slots as usize,
                    source: Source::Queries(t),
                });
                base += t.slots as usize;
            });
        }
        outcome?;
        let mut timestamps = QueryTimestamps {
            regions,
            scratch,
            read,
            next: 0,
            failed: None,
        };
        let mut first = Vec::with_capacity(WINDOWS - 1);
        for region in &timestamps.regions {
            if let Source::Queries(trace) = region.source {
                let copies = trace.copies.iter().take(WINDOWS - 1 - first.len());
                first.extend(copies.map(|copy| (trace, region.base, *copy)));
            }
        }
        for (trace, base, copy) in first {
            timestamps.load(trace, base, &copy)?;
        }
        Ok(timestamps)
    }

    /// Reads `copy` of `trace` (whose region starts at `base`) into the next window.
    fn load(
        &mut self,
        trace: &RecordedTrace,
        base: usize,
        copy: &CopyRange,
    ) -> Result<&[u64], vk::Result> {
        let w = &mut self.scratch.windows[self.next];
        self.next = (self.next + 1) % WINDOWS;
        w.clear();
        w.values.resize(copy.count as usize, 0);
        (self.read)(trace, copy, &mut w.values)?;
        w.lo = base + copy.slot as usize;
        Ok(&w.values)
    }
}

impl<R: ReadCopy> Timestamps for QueryTimestamps<'_, '_, R> {
    fn at(&mut self, index: usize) -> Option<u64> {
        for w in &self.scratch.windows {
            if let Some(&v) = w.values.get(index.wrapping_sub(w.lo)) {
                return Some(v);
            }
        }
        let r = self.regions.partition_point(|r| r.base + r.slots <= index);
        let region = self.regions.get(r).filter(|r| r.base <= index)?;
        let slot = index - region.base;
        let base = region.base;
        let trace = match region.source {
            Source::Tracked(at, _) => return self.scratch.tracked.get(at + slot).copied(),
            Source::Queries(trace) => trace,
        };
        let c = trace
            .copies
            .partition_point(|c| (c.slot + c.count) as usize <= slot);
        let copy = *trace.copies.get(c).filter(|c| c.slot as usize <= slot)?;
        match self.load(trace, base, &copy) {
            Ok(values) => values.get(slot - copy.slot as usize).copied(),
            Err(e) => {
                self.failed.get_or_insert(e);
                None
            }
        }
    }

    fn run_statistics(&self, trace: &RecordedTrace) -> Option<&[u64]> {
        self.regions.iter().find_map(|r| match r.source {
            Source::Tracked(at, t) if std::ptr::eq(t, trace) => {
                let start = at + r.slots;
                self.scratch.tracked.get(start..at + t.run_values())
            }
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests;
