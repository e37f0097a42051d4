//! How a queue's traced submissions went, said when the queue goes: how many needed no
//! command buffer of the layer's, and how long resubmissions waited for their command
//! buffers' last runs to be read (the application waited for those: see
//! `trace::record::reruns`). Written only in the queue's submit calls.

use std::sync::atomic::{AtomicU64, Ordering};

use ash::vk;

/// What one submission's reusable command buffers waited for their last runs' reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunWaits {
    /// Those that waited, and of them those the submission read itself.
    waited: u64,
    read: u64,
    /// How long they waited, in all.
    ns: u64,
    /// Last runs saved by the GPU instead (the device's reads wait: nothing waited).
    saved: u64,
}

impl RunWaits {
    pub fn add(&mut self, read: bool, ns: u64) {
        self.waited += 1;
        self.read += u64::from(read);
        self.ns += ns;
    }

    /// One last run saved by the GPU (see `trace::submit::saves`).
    pub fn saved(&mut self) {
        self.saved += 1;
    }
}

#[derive(Default)]
pub struct SubmissionCounts {
    /// Traced submissions that needed no command buffer of the layer's.
    unwrapped: AtomicU64,
    /// Reusable runs read at their resubmission.
    read_at_resubmission: AtomicU64,
    /// Reusable runs saved by the GPU at their resubmission.
    saved_at_resubmission: AtomicU64,
    /// Resubmissions that waited for their last run's read (by themselves, or by traceq
    /// under the trace's lock), and how long in all and at most in one (ns).
    run_waits: AtomicU64,
    run_wait_ns: AtomicU64,
    run_wait_most_ns: AtomicU64,
}

impl SubmissionCounts {
    /// A traced submission went with the layer's command buffers or without (`unwrapped`),
    /// its reusable command buffers having waited `waits` for their last runs' reads.
    pub fn count(&self, unwrapped: bool, waits: RunWaits) {
        if unwrapped {
            self.unwrapped.fetch_add(1, Ordering::Relaxed);
        }
        if waits.saved > 0 {
            self.saved_at_resubmission
                .fetch_add(waits.saved, Ordering::Relaxed);
        }
        if waits.waited > 0 {
            self.read_at_resubmission
                .fetch_add(waits.read, Ordering::Relaxed);
            self.run_waits.fetch_add(waits.waited, Ordering::Relaxed);
            self.run_wait_ns.fetch_add(waits.ns, Ordering::Relaxed);
            self.run_wait_most_ns.fetch_max(waits.ns, Ordering::Relaxed);
        }
    }

    /// Says the counts of `queue`: at `debug`, and the waits at `info` (the application's).
    pub fn say(&self, queue: vk::Queue) {
        let read = self.read_at_resubmission.load(Ordering::Relaxed);
        log::debug!(
            "queue {queue:?}: {} traced submissions needed no command buffer of the layer's ({read} reusable runs read at their resubmission, {} saved by the GPU at it)",
            self.unwrapped.load(Ordering::Relaxed),
            self.saved_at_resubmission.load(Ordering::Relaxed),
        );
        let waits = self.run_waits.load(Ordering::Relaxed);
        if waits > 0 {
            log::info!(
                "queue {queue:?}: {waits} resubmissions waited for their command buffers' last runs to be read ({read} read them themselves): {:.3} ms in all, {:.3} ms at most in one",
                self.run_wait_ns.load(Ordering::Relaxed) as f64 / 1e6,
                self.run_wait_most_ns.load(Ordering::Relaxed) as f64 / 1e6
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_add_up_per_submission_and_the_longest_is_kept() {
        let counts = SubmissionCounts::default();
        let mut one = RunWaits::default();
        one.add(true, 300);
        one.add(false, 200);
        counts.count(true, one);
        counts.count(true, RunWaits::default());
        let mut two = RunWaits::default();
        two.add(true, 400);
        counts.count(false, two);
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        assert_eq!(load(&counts.unwrapped), 2);
        assert_eq!(load(&counts.read_at_resubmission), 2);
        assert_eq!(load(&counts.run_waits), 3);
        assert_eq!(load(&counts.run_wait_ns), 900);
        assert_eq!(
            load(&counts.run_wait_most_ns),
            500,
            "one submission's waits together"
        );
    }
}
