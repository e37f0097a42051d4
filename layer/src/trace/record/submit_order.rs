//! A queue's reusable command buffers in the order the application last submitted them,
//! each with its frozen trace, so that a resubmission finds its trace without the
//! command-buffer index and cell.
//!
//! Why: a recorded command buffer resubmitted a frame later finds its index slot and cell
//! cold, two dependent cache misses (about 140 ns a submission on the benchmark's
//! machine, measured by throwaway builds that skipped them), while an application
//! submits its command buffers in the same order frame after frame. Here each entry leads
//! to the entry of the command buffer submitted after it last time; entries are taken in
//! the order command buffers are first submitted, so the next one is on the line the last
//! one read, or the next.
//!
//! The entries are written by the queue's submitting thread (Vulkan synchronises a
//! queue's submissions) and cleared by whichever thread lets the recording go
//! (`vkBeginCommandBuffer`, a reset or free, which Vulkan orders after every submission of
//! the command buffer and before its next). So an entry that still names `cb` when a
//! submission of `cb` reads it holds `cb`'s current recording, whose command buffer's cell
//! keeps the trace alive: the entry's pointer is safe to take a count of. A trace is in one
//! entry at most (its [`RecordedTrace::order_entry`]): learning a new place clears the old one.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use super::order_entry::{self, NONE};
use super::recorded_trace::RecordedTrace;

/// Entries of a queue's order: as many reusable command buffers as the application's
/// submissions on a queue go through before they come round again.
pub const ORDER_ENTRIES: usize = 512;

type OrderEntry = order_entry::OrderEntry<RecordedTrace>;

pub struct SubmitOrder {
    entries: Box<[OrderEntry]>,
    /// The entry of the command buffer submitted last. Only the queue's submitting thread
    /// reads and writes it, and the fields below.
    last: AtomicUsize,
    /// The entry a command buffer new to the order takes (the oldest taken).
    fresh: AtomicUsize,
    found: AtomicU64,
    looked_up: AtomicU64,
}

impl Default for SubmitOrder {
    fn default() -> Self {
        SubmitOrder {
            entries: (0..ORDER_ENTRIES).map(|_| OrderEntry::default()).collect(),
            last: AtomicUsize::new(NONE),
            fresh: AtomicUsize::new(0),
            found: AtomicU64::new(0),
            looked_up: AtomicU64::new(0),
        }
    }
}

impl SubmitOrder {
    /// The trace of `cb` if it is the command buffer that followed the last one the time
    /// before, its recording unchanged since it was learnt ([`Self::learn`]).
    ///
    /// # Safety
    /// Called by the queue's submitting thread for a command buffer of its current
    /// submission, which the application does not record, reset or free meanwhile.
    #[inline]
    pub unsafe fn expected(&self, cb: u64) -> Option<Arc<RecordedTrace>> {
        let last = self.entries.get(self.last.load(Ordering::Relaxed))?;
        let at = last.next.load(Ordering::Relaxed);
        let entry = self.entries.get(at)?;
        // Acquire: pairs with the release in `learn` (a submission on another thread that the
        // application ordered before this one).
        if entry.key.load(Ordering::Acquire) != cb {
            return None;
        }
        let trace = entry.trace.load(Ordering::Relaxed);
        self.last.store(at, Ordering::Relaxed);
        bump(&self.found);
        // SAFETY: the entry still names `cb`, so `trace` is its current recording (letting a
        // recording go clears its entry first, see the module's documentation), which the
        // command buffer's cell holds for the whole call; one more count is the clone.
        Some(unsafe {
            Arc::increment_strong_count(trace);
            Arc::from_raw(trace)
        })
    }

    /// `cb`, whose trace was looked up without the order, follows the last command buffer
    /// now: its entry (kept from an earlier recording of it if no other took it since, or
    /// the oldest) holds the trace, and the last one's entry leads to it. One-time
    /// recordings run once and are not learnt.
    ///
    /// # Safety
    /// As [`Self::expected`].
    pub unsafe fn learn(&self, cb: u64, trace: &Arc<RecordedTrace>) {
        bump(&self.looked_up);
        if trace.one_time {
            return;
        }
        let ptr = Arc::as_ptr(trace).cast_mut();
        let known = self.position(trace.order_entry.load(Ordering::Relaxed));
        let key = known.map(|at| self.entries[at].key.load(Ordering::Relaxed));
        let at = match known {
            // Still there: the order only moved.
            Some(at)
                if key == Some(cb) && self.entries[at].trace.load(Ordering::Relaxed) == ptr =>
            {
                at
            }
            // Its entry, unless another command buffer took it since.
            Some(at) if key == Some(0) || key == Some(cb) => self.hold(at, cb, trace),
            _ => {
                let at = self.fresh.load(Ordering::Relaxed);
                self.fresh
                    .store((at + 1) % ORDER_ENTRIES, Ordering::Relaxed);
                self.hold(at, cb, trace)
            }
        };
        if let Some(last) = self.entries.get(self.last.load(Ordering::Relaxed)) {
            last.next.store(at, Ordering::Relaxed);
        }
        self.last.store(at, Ordering::Relaxed);
    }

    /// Entry `at` holds `cb`'s `trace` from now on, the trace's only entry. Returns `at`.
    fn hold(&self, at: usize, cb: u64, trace: &Arc<RecordedTrace>) -> usize {
        let entry = &self.entries[at];
        entry
            .trace
            .store(Arc::as_ptr(trace).cast_mut(), Ordering::Relaxed);
        // Release: the pointer before the key that vouches for it.
        entry.key.store(cb, Ordering::Release);
        // AcqRel: a trace learnt on two queues at once (simultaneous use) makes the second
        // learner see the first one's key, which it then clears.
        let old = trace
            .order_entry
            .swap(std::ptr::from_ref(entry).cast_mut(), Ordering::AcqRel);
        if !old.is_null() && !std::ptr::eq(old, entry) {
            // SAFETY: entries live as long as their queue's order, which outlives every
            // trace the device's command buffers hold (see `Queues`).
            unsafe { &*old }.forget(cb);
        }
        at
    }

    /// The index of `entry` if it is one of this order's.
    fn position(&self, entry: *const OrderEntry) -> Option<usize> {
        let first = self.entries.as_ptr() as usize;
        let offset = (entry as usize).checked_sub(first)?;
        let at = offset / std::mem::size_of::<OrderEntry>();
        (at < ORDER_ENTRIES).then_some(at)
    }

    /// Forgets which command buffer was submitted last (tests).
    #[cfg(test)]
    fn forget_last(&self) {
        self.last.store(NONE, Ordering::Relaxed);
    }

    /// How many traced command buffers were found in the order, and how many looked up.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.found.load(Ordering::Relaxed),
            self.looked_up.load(Ordering::Relaxed),
        )
    }
}

/// A count only the queue's submitting thread writes: a load and a store, no locked
/// instruction.
fn bump(count: &AtomicU64) {
    count.store(count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

#[cfg(test)]
mod tests;
