//! Where a reusable command buffer's queries stand between its runs, so that resubmitting
//! it costs what a one-time submission costs: no command buffer of the layer's, only the
//! batch's completion (see `trace::submit::pending_submission`).
//!
//! A reusable primary without secondaries, not for simultaneous use, on a device that
//! resets queries on the host, is *tracked*. Its queries start reset (`Armed`). A run that
//! only signals leaves its timestamps in the queries (`InQueries`); the traceq thread reads
//! them once the batch completed and resets them on the host, arming the trace again. When
//! the application submits the command buffer again before traceq got there, Vulkan has
//! already made it wait for that run to complete (a command buffer without
//! `SIMULTANEOUS_USE` must not be pending when submitted), so the submitting thread reads
//! the run's few values itself, keeps them for traceq (`early`, by submission) and resets
//! the queries. On a device whose query reads wait for all of its work (`saves`: a CPU
//! device such as Lavapipe, whose `vkGetQueryPoolResults` waits for the device to go idle)
//! it does not read on the host (the read would wait for the work in flight, and even on an
//! idle device is a round trip to the driver's queue): the resubmission carries a command buffer of
//! the layer's, before the application's, that copies the last run into a buffer and
//! resets the queries (`Save`), and traceq reads the run from there once that submission
//! completed. A run that went
//! wrapped (`Copying`: the layer's copy resets the queries after reading them) is armed
//! again when traceq has its batch. Anything else is not armed and goes wrapped, as every
//! run of an untracked trace does.
//!
//! The phase is one atomic word per trace; a small lock per trace orders the reads of its
//! queries between the thread submitting its command buffer (which Vulkan already
//! serialises) and traceq: never shared between recording threads.

mod completed_runs;
mod early_runs;
mod phase;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ash::vk;
use parking_lot::Mutex;

use early_runs::EarlyRuns;
pub use early_runs::SavedRun;
use phase::Phase;

/// A tracked trace writes at most this many queries: what a resubmission reads itself
/// when traceq is behind (2 KB, a few hundred ns on the driver's side).
pub const TRACKED_SLOTS: u32 = 256;

/// The queries of one tracked trace, as its runs use them.
pub trait RunQueries {
    /// Reads the trace's timestamps (its whole readback region) into `out`.
    fn read(&self, out: &mut [u64]) -> Result<(), vk::Result>;
    /// Resets the trace's queries on the host.
    ///
    /// # Safety
    /// No pending work writes or reads them.
    unsafe fn reset(&self);
}

/// What traceq knows of the device's other work as it reads a run left in the queries (see
/// [`Reruns::read`]): on a device whose reads wait for all its work, work submitted since
/// traceq let the device settle would make the read wait for it under the run's lock, and
/// a resubmission of the run's command buffer behind the lock.
pub trait Quiet {
    /// Whether work was submitted since the device last settled (asked under the lock,
    /// right before the read).
    fn newer_work(&self) -> bool;
    /// Waits for that work (called without the lock).
    fn settle(&mut self);
}

/// A read with nothing to wait for first: a device whose reads do not wait, or a run only
/// discarded.
pub struct NoWait;

impl Quiet for NoWait {
    fn newer_work(&self) -> bool {
        false
    }
    fn settle(&mut self) {}
}

/// What taking a run found (see [`Reruns::take`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// The queries may hold values or be written: the run needs the layer's copy.
    No,
    /// The queries are reset.
    Armed,
    /// The queries are reset: traceq read the last run while this submission waited
    /// `waited_ns` for it (under the trace's lock).
    ArmedAfterWait { waited_ns: u64 },
    /// The last run was still in the queries: read now, and the queries reset. The
    /// submitting thread waited `waited_ns` for it (the lock and the driver's read).
    ReadNow { waited_ns: u64 },
    /// The last run is still in the queries, on a device whose reads wait for all its
    /// work: this submission must save it (copy it out and reset the queries, on the GPU,
    /// before its own run): see [`Reruns::prepared`], [`Reruns::made`],
    /// [`Reruns::read_instead_of_saving`] and [`Reruns::not_submitted`].
    Save,
}

/// `S`: how a run saved by the GPU is held until traceq reads it.
///
/// The phase is one atomic word, so that the common resubmission (its last run read by
/// traceq: `Armed`) takes it with a load and a store, no lock and no locked instruction.
/// Only the submitting thread moves the phase away from `Armed` (and between its own
/// states); traceq only moves its batch's own `InQueries`/`Copying` back to `Armed`, with a
/// compare-exchange, so it never overwrites a later submission's state. Reading the queries
/// (traceq's read, a resubmission's early read) happens under `reads`' lock, which orders
/// the two: a submission that finds the last run still in the queries re-reads the phase
/// under the lock.
#[repr(C)]
pub struct Reruns<S> {
    phase: AtomicU64,
    reads: Mutex<EarlyRuns<S>>,
    /// Runs left in the queries at a resubmission are saved by the GPU, not read on the
    /// host (the device's reads wait for all its work).
    saves: bool,
}

/// An early run was dropped for room (said once per process).
static SAID_BEHIND: AtomicBool = AtomicBool::new(false);
/// A run was not complete when its command buffer was submitted again (said once).
static SAID_PENDING: AtomicBool = AtomicBool::new(false);
/// A resubmission waited long for its last run's read (said once).
static SAID_WAITED: AtomicBool = AtomicBool::new(false);

/// A resubmission that waits this long for its last run's read is said (once): the
/// application's own work no longer overlaps the GPU's there. Long enough that a thread
/// the scheduler kept waiting on a loaded machine is not taken for it, shorter than a
/// frame of work in flight.
const LONG_WAIT: Duration = Duration::from_millis(10);

impl<S> Default for Reruns<S> {
    fn default() -> Self {
        Reruns {
            phase: AtomicU64::new(Phase::Unknown.encode()),
            reads: Mutex::default(),
            saves: false,
        }
    }
}

/// Says once that runs taken early are being dropped for room (`dropped`), with how many
/// are kept.
fn say_dropped(dropped: bool, kept: usize) {
    if dropped && !SAID_BEHIND.swap(true, Ordering::Relaxed) {
        log::warn!("traceq is {kept} runs behind a command buffer resubmitted in a loop; its oldest runs are dropped and counted");
    }
}

impl<S: SavedRun> Reruns<S> {
    fn phase(&self) -> Phase {
        // Acquire: traceq's reset of the queries happened before it armed them.
        Phase::decode(self.phase.load(Ordering::Acquire))
    }

    /// Sets the phase from the submitting thread (the only one that leaves `Armed`).
    fn set(&self, phase: Phase) {
        self.phase.store(phase.encode(), Ordering::Release);
    }

    /// `from` becomes `to` unless the phase moved on meanwhile.
    fn replace(&self, from: Phase, to: Phase) -> bool {
        self.phase
            .compare_exchange(
                from.encode(),
                to.encode(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// A new recording: `armed` when the trace is tracked (its queries were handed out
    /// reset); runs taken early for the last recording are forgotten. `saves`: the
    /// device's reads wait for all its work (see [`Taken::Save`]).
    pub fn restart(&mut self, armed: bool, saves: bool) {
        let phase = if armed { Phase::Armed } else { Phase::Unknown };
        *self.phase.get_mut() = phase.encode();
        self.saves = saves;
        self.reads.get_mut().clear();
    }

    /// The run of `submission` being prepared: whether its queries are reset (the run may
    /// go without a copy, and is taken to: see [`Self::wrapped`] otherwise). A run still in
    /// the queries is read now (`slots` values) and the queries reset: the application
    /// waited for it to complete before submitting again. Where the device's reads wait
    /// for all its work, it is left for this submission to save instead ([`Taken::Save`]):
    /// the read would wait for the work in flight, and even on an idle device costs a
    /// round trip to the driver's queue (Lavapipe's: 26 us against 3 us for the save).
    pub fn take(&self, submission: u64, slots: usize, queries: &impl RunQueries) -> Taken {
        match self.phase() {
            Phase::Armed => {
                self.set(Phase::InQueries(submission));
                Taken::Armed
            }
            // Its second run in one call: the first has the queries.
            Phase::InQueries(s) if s == submission => Taken::No,
            Phase::InQueries(_) => self.take_read(submission, slots, queries),
            Phase::Untimed => {
                let _reads = self.reads.lock();
                // SAFETY: the untimed run completed: Vulkan made this submission wait for
                // it (a tracked command buffer is not SIMULTANEOUS_USE), and no batch
                // reads it.
                unsafe { queries.reset() };
                self.set(Phase::InQueries(submission));
                Taken::Armed
            }
            Phase::Copying(_) | Phase::Unknown => Taken::No,
        }
    }

    /// [`Self::take_read_locked`], timed: the wait goes with what it took (the queue counts
    /// it), and a long one is said once.
    fn take_read(&self, submission: u64, slots: usize, queries: &impl RunQueries) -> Taken {
        let started = Instant::now();
        let taken = self.take_read_locked(submission, slots, queries);
        let waited = started.elapsed();
        if waited >= LONG_WAIT && !SAID_WAITED.swap(true, Ordering::Relaxed) {
            log::warn!("a resubmitted command buffer waited {:.1} ms for its last run's timestamps to be read, which the traceq thread had not done when the resubmission came (Lavapipe's vkGetQueryPoolResults waits for the device to go idle, so that read waits for the GPU's work in flight; on a busy machine the traceq thread may also have waited for a core while it read): the application's CPU work stopped overlapping the GPU's there; one-time command buffers are never read at their submission", waited.as_secs_f64() * 1e3);
        }
        let waited_ns = waited.as_nanos() as u64;
        match taken {
            Taken::ReadNow { .. } => Taken::ReadNow { waited_ns },
            Taken::Armed => Taken::ArmedAfterWait { waited_ns },
            other => other,
        }
    }

    /// [`Self::take`] of a trace whose last run was still in the queries: under the lock,
    /// where traceq may have read it meanwhile (this waited for that read); left to save
    /// where reads wait (`saves`), or read now. The wait is [`Self::take_read`]'s to give:
    /// `ReadNow` comes back with 0.
    fn take_read_locked(&self, submission: u64, slots: usize, queries: &impl RunQueries) -> Taken {
        let mut reads = self.reads.lock();
        let earlier = match self.phase() {
            Phase::Armed => {
                self.set(Phase::InQueries(submission));
                return Taken::Armed;
            }
            Phase::InQueries(earlier) if earlier != submission => earlier,
            _ => return Taken::No,
        };
        if self.saves {
            // Left for this submission to save on the GPU: no read on the host, even on an
            // idle device (Lavapipe's read is a round trip to its queue thread).
            let dropped = reads.push_saving(earlier, submission, slots);
            say_dropped(dropped, reads.len());
            self.set(Phase::InQueries(submission));
            return Taken::Save;
        }
        let dropped = reads.push_read(earlier, slots, |values| {
            let read = queries.read(values);
            // Not ready: the application broke the rule (a failure of the driver's is said
            // by traceq when it finds it).
            if read == Err(vk::Result::NOT_READY) && !SAID_PENDING.swap(true, Ordering::Relaxed)
            {
                log::warn!("a command buffer without SIMULTANEOUS_USE was submitted again before its last run completed (invalid in Vulkan); that run's timestamps are lost, and the new run's may be overwritten by the last one's late writes");
            }
            read
        });
        say_dropped(dropped, reads.len());
        // SAFETY: the run that wrote them completed (see above); no other run of this
        // trace was submitted since (it would have read them itself).
        unsafe { queries.reset() };
        self.set(Phase::InQueries(submission));
        Taken::ReadNow { waited_ns: 0 }
    }

    /// Whether the run of `submission` is in the queries, untaken.
    pub fn holds(&self, submission: u64) -> bool {
        self.phase() == Phase::InQueries(submission)
    }

    /// Submission `by`, which took [`Taken::Save`], cannot save the last run (the layer's
    /// command buffers for it could not be had): the run is read on the host now, and the
    /// queries reset, as where reads do not wait.
    pub fn read_instead_of_saving(&self, by: u64, slots: usize, queries: &impl RunQueries) {
        let mut reads = self.reads.lock();
        let Some((earlier, copy)) = reads.unmade(by) else {
            return;
        };
        let dropped = reads.push_read(earlier, slots, |values| queries.read(values));
        say_dropped(dropped, reads.len());
        // SAFETY: the last run completed (the application waited for it) and this
        // submission, which took the queries, has not been made.
        unsafe { queries.reset() };
        drop(reads);
        if let Some(copy) = copy {
            copy.unused();
        }
    }

    /// Submission `by`, which took [`Taken::Save`], saves the last run with `copy` (the
    /// layer's command buffers for it were had).
    pub fn prepared(&self, by: u64, copy: S) {
        let unwanted = self.reads.lock().prepared(by, copy);
        if let Err(copy) = unwanted {
            copy.unused();
        }
    }

    /// Submission `by`, which saves the last run, was made and completes at `completion`:
    /// traceq reads the run from the copy once it completed.
    pub fn made(&self, by: u64, completion: S::Completion) {
        self.reads.lock().made(by, completion);
    }

    /// The run of `submission` goes wrapped after all: the layer's copy reads the queries
    /// and resets them.
    pub fn wrapped(&self, submission: u64) {
        self.set(Phase::Copying(submission));
    }

    /// The submission went down without the layer's part (the layer could not prepare it):
    /// its run writes the queries, whatever it took, and no batch reads it. A last run it
    /// was to save is read on the host first (its copy does not run, and the new run would
    /// overwrite it). Whatever the phase said (taken for this run, or a wrapped run's copy
    /// that traceq has yet to see), the queries are written after it.
    pub fn ran_untimed(&self, submission: u64, slots: usize, queries: &impl RunQueries) {
        if self.saves {
            self.read_instead_of_saving(submission, slots, queries);
        }
        self.set(Phase::Untimed);
    }

    /// The submission was not made (the call failed): queries it took are as they were,
    /// reset.
    pub fn not_submitted(&self, submission: u64) {
        if self.saves {
            let mut reads = self.reads.lock();
            if let Some((earlier, copy)) = reads.unmade(submission) {
                // It was to save the last run: that run is still in the queries. Said
                // under the lock: traceq, waiting for the save, must find the run either
                // being saved or back in the queries, never gone.
                self.set(Phase::InQueries(earlier));
                drop(reads);
                if let Some(copy) = copy {
                    copy.unused();
                }
                return;
            }
        }
        if !self.replace(Phase::InQueries(submission), Phase::Armed) {
            self.replace(Phase::Copying(submission), Phase::Unknown);
        }
    }
}

#[cfg(test)]
mod quiet_tests;
#[cfg(test)]
mod save_tests;
#[cfg(test)]
mod tests;
