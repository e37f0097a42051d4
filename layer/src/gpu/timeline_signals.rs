//! Which of a queue's batches signal its timeline semaphore, and with which value.
//!
//! A batch's completion is a value of the queue's timeline. Signalling it costs the driver
//! an extra batch per submission (on Lavapipe a small submission then costs about twice a
//! plain one), so a batch that needs nothing of the layer's but its completion (one-time
//! command buffers, queries reset on the host) may go without: it takes the value the next
//! signal will carry, and the signal operation of a later submission on the queue covers it
//! (a signal's first synchronisation scope holds every command earlier in submission order).
//!
//! A batch signals when the application's own submission synchronises with something (a
//! fence, a semaphore signal: the end of a frame, a wait the application will make; such a
//! submission signals even when it carries nothing traced, if batches wait), when
//! [`MAX_DEFERRED`] batches already wait for a signal, or whenever the layer's command
//! buffers go with it. After the application waited for the queue to go idle (and before
//! the device goes) the host signals the value the waiting batches carry. What still waits
//! when the process exits without either is given up and counted.
//!
//! All calls but [`TimelineSignals::submitted`], [`TimelineSignals::latest_made`] and
//! [`TimelineSignals::being_made`] are made inside the application's calls on the queue,
//! which Vulkan synchronises externally; the traceq thread only reads.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Batches that may wait for a later signal: bounds what a queue can hold untimed (their
/// query chunks) and how late their trace comes when the application never synchronises.
pub const MAX_DEFERRED: u32 = 15;

#[derive(Default)]
pub struct TimelineSignals {
    /// The last value handed to a signal operation (being submitted, submitted, or
    /// signalled on the host).
    signalled: AtomicU64,
    /// Batches handed the value after `signalled` with no signal of their own.
    deferred: AtomicU32,
    /// The last value whose signal was submitted (the call returned) or made on the host.
    made: AtomicU64,
}

impl TimelineSignals {
    /// The value of a batch that signals the timeline; the deferred ones complete with it.
    pub fn signal(&self) -> u64 {
        self.deferred.store(0, Ordering::Relaxed);
        self.signalled.fetch_add(1, Ordering::Release) + 1
    }

    /// The value of a batch that needs nothing but its completion, and whether it signals
    /// it. `app_syncs`: the application's submission has a fence or signals a semaphore.
    pub fn signal_or_defer(&self, app_syncs: bool) -> (u64, bool) {
        if app_syncs || self.deferred.load(Ordering::Relaxed) >= MAX_DEFERRED {
            return (self.signal(), true);
        }
        self.deferred.fetch_add(1, Ordering::Relaxed);
        (self.signalled.load(Ordering::Relaxed) + 1, false)
    }

    /// The signal of `value` was submitted, or made on the host.
    pub fn made(&self, value: u64) {
        // Only inside the application's calls on the queue: no other writer.
        if value > self.made.load(Ordering::Relaxed) {
            self.made.store(value, Ordering::Release);
        }
    }

    /// The last value whose signal was made (see [`Self::made`]): waiting for it never
    /// waits for a signal still to be submitted.
    pub fn latest_made(&self) -> u64 {
        self.made.load(Ordering::Acquire)
    }

    /// Whether a signal was handed out beyond the last one made (a submission is being
    /// made, or failed).
    pub fn being_made(&self) -> bool {
        self.signalled.load(Ordering::Acquire) > self.made.load(Ordering::Acquire)
    }

    /// Whether batches wait for a signal.
    pub fn waiting(&self) -> bool {
        self.deferred.load(Ordering::Relaxed) > 0
    }

    /// The value the host must signal now that the queue is idle, if batches wait for one.
    /// Once taken, later batches count from it.
    pub fn take_deferred(&self) -> Option<u64> {
        self.waiting().then(|| self.signal())
    }

    /// Whether a signal of `value` (or higher) was handed out: a batch waiting for a value
    /// beyond it completes only if the application submits again (or waits for idle).
    pub fn submitted(&self, value: u64) -> bool {
        value <= self.signalled.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deferred_batches_take_the_value_of_the_next_signal() {
        let t = TimelineSignals::default();
        assert_eq!(t.signal_or_defer(false), (1, false));
        assert_eq!(t.signal_or_defer(false), (1, false));
        assert!(!t.submitted(1), "nothing signals 1 yet");
        // The application's fence: this batch signals, and covers the two before it.
        assert_eq!(t.signal_or_defer(true), (1, true));
        assert!(t.submitted(1));
        assert_eq!(t.signal_or_defer(false), (2, false));
        // A batch with the layer's command buffers always signals.
        assert_eq!(t.signal(), 2);
        assert_eq!(t.take_deferred(), None, "nothing waits");
    }

    #[test]
    fn at_most_max_deferred_wait_for_a_signal() {
        let t = TimelineSignals::default();
        for _ in 0..MAX_DEFERRED {
            assert_eq!(t.signal_or_defer(false), (1, false));
        }
        assert_eq!(t.signal_or_defer(false), (1, true));
        assert_eq!(t.signal_or_defer(false), (2, false));
    }

    #[test]
    fn the_host_signals_for_batches_left_waiting() {
        let t = TimelineSignals::default();
        t.signal_or_defer(false);
        t.signal_or_defer(false);
        assert!(t.waiting());
        assert_eq!(t.take_deferred(), Some(1));
        assert!(!t.waiting());
        assert!(t.submitted(1));
        assert_eq!(t.take_deferred(), None, "taken once");
        assert_eq!(t.signal_or_defer(false), (2, false));
    }
}
