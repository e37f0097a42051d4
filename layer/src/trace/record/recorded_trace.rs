//! A command buffer's trace as recorded (frozen at `vkEndCommandBuffer`), shared by every
//! batch that submits the command buffer, with the traces of the secondary command buffers
//! it executes. Its chunks go back to the pool when the last holder is gone, which is never
//! before the last batch that reads them has been processed.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use ash::vk;
use parking_lot::Mutex;

use super::chunk::{ChunkPool, RecordedEvent};
use super::order_entry::OrderEntry;
use super::recorded_hw::RecordedHw;
use super::recorded_stats::RecordedStats;
pub use super::reruns::{NoWait, Quiet, Taken};
use super::reruns::{Reruns, RunQueries, TRACKED_SLOTS};
use super::saved_copy::SavedCopy;
use crate::gpu::interface::{Arming, CopyRange, QueryRange, RunSlot};

mod runs;

/// Ids of recordings: 0 is never one.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A secondary command buffer executed by a recording: its trace and where its events go
/// among the executing trace's (`position` events came before it).
pub struct Child {
    pub position: u32,
    pub trace: Arc<RecordedTrace>,
}

/// `repr(C)`, the fields a submission reads first: with the `Arc`'s counts they fill the
/// allocation's first 40 bytes, so that a resubmission (whose trace traceq last touched,
/// long ago in cache terms) finds them in one or two lines rather than four.
#[repr(C)]
pub struct RecordedTrace {
    tracked: bool,
    /// Recorded with `ONE_TIME_SUBMIT`: it runs at most once.
    pub one_time: bool,
    /// Recorded with `SIMULTANEOUS_USE`: a run may start before the last one completed.
    pub simultaneous: bool,
    pub complete: bool,
    /// One-time: its queries are reset (on the host) and no submission has run it yet.
    armed: AtomicBool,
    /// A run left its queries written (it was read from them, not copied and reset): they
    /// are reset on the host when the trace goes.
    written: AtomicBool,
    /// It holds a recording (until given back).
    live: bool,
    /// Queries written by one execution of this command buffer alone, in readback order.
    pub slots: u32,
    /// Reusable: where its queries stand between runs, when it is tracked
    /// ([`Self::tracked`]).
    reruns: Reruns<SavedCopy>,
    /// Names this recording among every recording of the process (a re-recording gets a
    /// new id): the layer's copy command buffers recorded for it alone are kept by it.
    pub id: u64,
    pub cmd: vk::CommandBuffer,
    pub chunks: Vec<QueryRange>,
    /// The queries read, with their slots relative to this trace's readback region.
    pub copies: Vec<CopyRange>,
    pub events: Vec<RecordedEvent>,
    /// The events' arguments, one after the other (see [`RecordedEvent`]).
    pub args: Vec<u32>,
    pub strings: Vec<u8>,
    pub children: Vec<Child>,
    /// The last batch that ran this trace: its queue and the timeline value that signals
    /// its copy, so that a later run on another queue re-arms only after that copy.
    pub last_run: Mutex<Option<LastRun>>,
    /// The fingerprint of the layer's commands around a submission of this trace alone.
    wrap_memo: WrapMemo,
    /// Its entry in a queue's submission order, if one was learnt (see `submit_order`).
    pub(super) order_entry: AtomicPtr<OrderEntry<RecordedTrace>>,
    /// Where each run of a tracked trace copies its own queries at its end (see
    /// `gpu::run_slots`): its runs are read there, never waited for on the host or saved.
    run_slot: Option<RunSlot>,
    pool: Arc<ChunkPool>,
    /// Its pipeline statistics (`GPU_TRACE_COUNTERS=pipeline`, one-time primaries).
    pub statistics: Option<RecordedStats>,
    /// Its hardware counters (`GPU_TRACE_COUNTERS=perf:...`, one-time primaries).
    pub hardware: Option<RecordedHw>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastRun {
    pub queue: vk::Queue,
    pub semaphore: vk::Semaphore,
    pub value: u64,
}

/// What one recording made, frozen into a trace at `vkEndCommandBuffer`.
#[derive(Default)]
pub struct TraceParts {
    pub cmd: vk::CommandBuffer,
    pub chunks: Vec<QueryRange>,
    pub copies: Vec<CopyRange>,
    pub events: Vec<RecordedEvent>,
    pub args: Vec<u32>,
    pub strings: Vec<u8>,
    pub children: Vec<Child>,
    pub slots: u32,
    pub complete: bool,
    pub one_time: bool,
    pub simultaneous: bool,
    /// The slot its end copies its queries into (a trackable recording: see
    /// [`RecordedTrace::trackable`]).
    pub run_slot: Option<RunSlot>,
    /// Its pipeline statistics, if it counted them.
    pub statistics: Option<RecordedStats>,
    /// Its hardware counters, if it counted them.
    pub hardware: Option<RecordedHw>,
}

impl RecordedTrace {
    pub fn new(parts: TraceParts, pool: Arc<ChunkPool>) -> RecordedTrace {
        let mut trace = RecordedTrace {
            id: 0,
            cmd: vk::CommandBuffer::null(),
            chunks: Vec::new(),
            copies: Vec::new(),
            events: Vec::new(),
            args: Vec::new(),
            strings: Vec::new(),
            children: Vec::new(),
            slots: 0,
            complete: true,
            one_time: false,
            simultaneous: false,
            armed: AtomicBool::new(false),
            reruns: Reruns::default(),
            tracked: false,
            written: AtomicBool::new(false),
            last_run: Mutex::new(None),
            wrap_memo: WrapMemo::default(),
            order_entry: AtomicPtr::new(std::ptr::null_mut()),
            run_slot: None,
            live: false,
            pool,
            statistics: None,
            hardware: None,
        };
        trace.refill(parts);
        trace
    }

    /// Holds a new recording in a trace whose last one was given back ([`Self::give_back`]),
    /// so that re-recording a command buffer reuses the trace's allocation.
    pub fn refill(&mut self, parts: TraceParts) {
        debug_assert!(!self.live, "a trace holds one recording at a time");
        self.pool.trace_recorded();
        self.id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self.wrap_memo = WrapMemo::default();
        self.cmd = parts.cmd;
        self.chunks = parts.chunks;
        self.copies = parts.copies;
        self.events = parts.events;
        self.args = parts.args;
        self.strings = parts.strings;
        self.children = parts.children;
        self.slots = parts.slots;
        self.complete = parts.complete;
        self.one_time = parts.one_time;
        self.simultaneous = parts.simultaneous;
        self.statistics = parts.statistics;
        self.hardware = parts.hardware;
        *self.armed.get_mut() = self.pool.resets_on_host();
        self.tracked = Self::trackable(
            &self.pool,
            self.one_time,
            self.simultaneous,
            !self.children.is_empty(),
            self.slots,
        );
        if let Some(slot) = parts.run_slot.filter(|_| !self.tracked) {
            self.pool.release_run_slot(slot);
        }
        self.run_slot = parts.run_slot.filter(|_| self.tracked);
        // A run in its slot is read there: nothing waits, nothing is saved.
        self.reruns.restart(
            self.tracked,
            self.pool.saves_runs_on_gpu() && self.run_slot.is_none(),
        );
        *self.written.get_mut() = false;
        *self.last_run.get_mut() = None;
        self.live = true;
    }

    /// The indices of its events that end a range with GPU counters (pipeline statistics
    /// or hardware counters: one kind per process), in order.
    pub fn counted_events(&self) -> impl Iterator<Item = u32> + '_ {
        let statistics = self.statistics.iter().flat_map(|s| s.range_events());
        statistics.chain(self.hardware.iter().flat_map(|h| h.range_events()))
    }

    /// Whether a recording is tracked: a reusable run is read on the host between runs (see
    /// `reruns`), only where no other run can be in flight at a resubmission, and the
    /// queries are few.
    pub fn trackable(
        pool: &ChunkPool,
        one_time: bool,
        simultaneous: bool,
        children: bool,
        slots: u32,
    ) -> bool {
        pool.resets_on_host() && !one_time && !simultaneous && !children && slots <= TRACKED_SLOTS
    }

    /// Gives the recording's chunks and lists back, as dropping the trace does: no batch
    /// holds it any more. The trace is left empty, ready for [`Self::refill`].
    pub fn give_back(&mut self) {
        if !std::mem::take(&mut self.live) {
            return;
        }
        self.pool.trace_dropped();
        if let Some(slot) = self.run_slot.take() {
            self.pool.release_run_slot(slot);
        }
        // Relaxed: the batch that ran it completed, and traceq dropped its hold, before this.
        let written = *self.written.get_mut();
        self.pool.release(&self.chunks, written);
        if let Some(stats) = self.statistics.take() {
            self.pool.statistics.release(stats.statistics, stats.pools);
        }
        if let Some(hw) = self.hardware.take() {
            self.pool.hardware.release(hw.family, hw.pool);
        }
        self.pool
            .spare_events
            .give(std::mem::take(&mut self.events));
        self.pool.spare_args.give(std::mem::take(&mut self.args));
        self.pool
            .spare_chunks
            .give(std::mem::take(&mut self.chunks));
        self.pool
            .spare_copies
            .give(std::mem::take(&mut self.copies));
        self.strings.clear();
        self.children.clear();
    }

    /// This trace and its children's, depth first (the order of their readback regions).
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a RecordedTrace)) {
        f(self);
        for child in &self.children {
            child.trace.visit(f);
        }
    }

    /// The fingerprint of the layer's commands around a submission of this trace alone
    /// with `arming`, once one was noted ([`Self::note_wrap_fingerprint`]).
    pub fn wrap_fingerprint(&self, arming: Arming) -> Option<u64> {
        // Acquire: pairs with the note's release, so the fingerprint read is the one noted
        // with this arming (two threads noting at once note the same values).
        (self.wrap_memo.arming.load(Ordering::Acquire) == WrapMemo::code(arming))
            .then(|| self.wrap_memo.fingerprint.load(Ordering::Relaxed))
    }

    pub fn note_wrap_fingerprint(&self, arming: Arming, fingerprint: u64) {
        self.wrap_memo
            .fingerprint
            .store(fingerprint, Ordering::Relaxed);
        self.wrap_memo
            .arming
            .store(WrapMemo::code(arming), Ordering::Release);
    }

    /// The timestamps this trace's own queries hold (not its children's), written by
    /// completed work, into its readback region `out` (`slots` values).
    pub fn read_own_queries(&self, out: &mut [u64]) -> Result<(), vk::Result> {
        for c in &self.copies {
            let at = c.slot as usize;
            let region = out
                .get_mut(at..at + c.count as usize)
                .ok_or(vk::Result::ERROR_UNKNOWN)?;
            self.read_copy(c, region)?;
        }
        Ok(())
    }

    /// The values of one of [`Self::copies`] (`copy.count` of them), written by completed
    /// work.
    pub fn read_copy(&self, copy: &CopyRange, out: &mut [u64]) -> Result<(), vk::Result> {
        self.pool.read_queries(copy, out)
    }

    /// Events of this trace and its children.
    pub fn event_count(&self) -> u64 {
        let mut n = 0;
        self.visit(&mut |t| n += t.events.len() as u64);
        n
    }

    /// The command buffer lets this recording go (begin, reset, free): no submission finds
    /// it in a queue's submission order from now on. The entry stays noted: the command
    /// buffer's next recording takes it again if no other took it meanwhile.
    pub fn forget_order(&self) {
        let entry = self.order_entry.load(Ordering::Relaxed);
        if !entry.is_null() {
            // SAFETY: entries live as long as their queue's order, which outlives every
            // trace the device's command buffers hold (see `trace::submit::queues`).
            unsafe { &*entry }.forget(ash::vk::Handle::as_raw(self.cmd));
        }
    }
}

/// A recording's wrap fingerprint and the arming it is for (0: none noted yet). The
/// layer's commands around a trace submitted alone follow from the trace and the arming,
/// so it is worked out once per recording, not at every resubmission.
#[derive(Default)]
struct WrapMemo {
    fingerprint: AtomicU64,
    arming: AtomicU8,
}

impl WrapMemo {
    fn code(arming: Arming) -> u8 {
        1 | u8::from(arming.rearm) << 1 | u8::from(arming.reset_after_copy) << 2
    }
}

impl RunQueries for RecordedTrace {
    fn read(&self, out: &mut [u64]) -> Result<(), vk::Result> {
        match self.run_slot {
            Some(slot) => {
                let n = self.run_values().min(out.len());
                self.pool.read_run_slot(slot, &mut out[..n]);
                Ok(())
            }
            None => self.read_own_queries(out),
        }
    }

    unsafe fn reset(&self) {
        for chunk in &self.chunks {
            // SAFETY: the caller's promise.
            unsafe { self.pool.reset_queries(chunk) };
        }
    }
}

impl Drop for RecordedTrace {
    fn drop(&mut self) {
        self.give_back();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::interface::Backend;
    use crate::trace::health::Health;

    const COPY_RESETS: Arming = Arming {
        rearm: false,
        reset_after_copy: true,
    };

    #[test]
    fn a_wrap_fingerprint_is_kept_per_arming_until_the_trace_is_recorded_again() {
        let pool = Arc::new(ChunkPool::new(Backend::inert(), Arc::new(Health::new(0))));
        let mut trace = RecordedTrace::new(TraceParts::default(), Arc::clone(&pool));
        let first = trace.id;
        assert_ne!(first, 0, "0 names no recording");
        assert_eq!(trace.wrap_fingerprint(COPY_RESETS), None);
        trace.note_wrap_fingerprint(COPY_RESETS, 99);
        assert_eq!(trace.wrap_fingerprint(COPY_RESETS), Some(99));
        let rearming = Arming {
            rearm: true,
            ..COPY_RESETS
        };
        assert_eq!(trace.wrap_fingerprint(rearming), None, "another arming");
        trace.give_back();
        trace.refill(TraceParts::default());
        assert_ne!(trace.id, first, "a new recording, a new id");
        assert_eq!(trace.wrap_fingerprint(COPY_RESETS), None, "forgotten");
        let other = RecordedTrace::new(TraceParts::default(), pool);
        assert!(other.id != first && other.id != trace.id);
    }
}
