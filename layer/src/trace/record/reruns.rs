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
//! the queries. A run that went wrapped (`Copying`: the layer's copy resets the queries
//! after reading them) is armed again when traceq has its batch. Anything else is not
//! armed and goes wrapped, as every run of an untracked trace does.
//!
//! The phase is one atomic word per trace; a small lock per trace orders the reads of its
//! queries between the thread submitting its command buffer (which Vulkan already
//! serialises) and traceq: never shared between recording threads.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ash::vk;
use parking_lot::Mutex;

/// A tracked trace writes at most this many queries: what a resubmission reads itself
/// when traceq is behind (2 KB, a few hundred ns on the driver's side).
pub const TRACKED_SLOTS: u32 = 256;

/// Values of runs read early and kept for traceq, per trace: 1 MiB, thousands of runs of
/// a small command buffer (a debug build under validation, on a loaded machine, saw
/// traceq hundreds of runs behind a command buffer resubmitted in a loop). Beyond it the
/// oldest is dropped, and counted lost when traceq finds it missing. (Each run is also a
/// batch waiting for traceq, which `traceq::MAX_PENDING_BATCHES` bounds.)
const EARLY_VALUES: usize = 1 << 17;

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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The queries are reset and no run is in flight.
    Armed,
    /// This submission's run leaves its timestamps in the queries, unread (or is being
    /// prepared: a submission that goes wrapped says so, see [`Reruns::wrapped`]).
    InQueries(u64),
    /// This submission's run is wrapped: its copy reads the queries and resets them.
    Copying(u64),
    /// Not known (a wrapped submission failed): every later run is wrapped.
    Unknown,
}

impl Phase {
    /// One word: the state in the low two bits, the submission above them.
    fn encode(self) -> u64 {
        match self {
            Phase::Armed => 0,
            Phase::Unknown => 1,
            Phase::InQueries(s) => s << 2 | 2,
            Phase::Copying(s) => s << 2 | 3,
        }
    }

    fn decode(word: u64) -> Phase {
        match word & 3 {
            0 => Phase::Armed,
            1 => Phase::Unknown,
            2 => Phase::InQueries(word >> 2),
            _ => Phase::Copying(word >> 2),
        }
    }
}

/// A run read by a later submission: its values, or why they could not be read.
struct Early {
    submission: u64,
    values: Vec<u64>,
    read: Result<(), vk::Result>,
}

/// What only a read of the queries touches, under the trace's lock.
#[derive(Default)]
struct Reads {
    /// Runs read by a later submission before traceq had them.
    early: VecDeque<Early>,
    /// Emptied value lists, kept so that reading early allocates nothing in the steady state.
    spare: Vec<Vec<u64>>,
}

/// The phase is one atomic word, so that the common resubmission (its last run read by
/// traceq: `Armed`) takes it with a load and a store, no lock and no locked instruction.
/// Only the submitting thread moves the phase away from `Armed` (and between its own
/// states); traceq only moves its batch's own `InQueries`/`Copying` back to `Armed`, with a
/// compare-exchange, so it never overwrites a later submission's state. Reading the queries
/// (traceq's read, a resubmission's early read) happens under `reads`' lock, which orders
/// the two: a submission that finds the last run still in the queries re-reads the phase
/// under the lock.
#[repr(C)]
pub struct Reruns {
    phase: AtomicU64,
    reads: Mutex<Reads>,
}

/// The lock as traceq takes it: spinning and yielding, never parked, so that a submitting
/// thread that held it never has to wake traceq on its way out (a futex call on the
/// application's time). The submitting side takes it plainly: it waits only while traceq
/// reads this trace's few queries.
fn lock_for_traceq(reads: &Mutex<Reads>) -> parking_lot::MutexGuard<'_, Reads> {
    loop {
        if let Some(guard) = reads.try_lock() {
            return guard;
        }
        std::thread::yield_now();
    }
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

impl Default for Reruns {
    fn default() -> Self {
        Reruns {
            phase: AtomicU64::new(Phase::Unknown.encode()),
            reads: Mutex::default(),
        }
    }
}

impl Reruns {
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
    /// reset); runs read early for the last recording are forgotten.
    pub fn restart(&mut self, armed: bool) {
        let phase = if armed { Phase::Armed } else { Phase::Unknown };
        *self.phase.get_mut() = phase.encode();
        let reads = self.reads.get_mut();
        while let Some(early) = reads.early.pop_front() {
            reads.spare.push(early.values);
        }
    }

    /// The run of `submission` being prepared: whether its queries are reset (the run may
    /// go without a copy, and is taken to: see [`Self::wrapped`] otherwise). A run still in
    /// the queries is read now (`slots` values) and the queries reset: the application
    /// waited for it to complete before submitting again.
    pub fn take(&self, submission: u64, slots: usize, queries: &impl RunQueries) -> Taken {
        match self.phase() {
            Phase::Armed => {
                self.set(Phase::InQueries(submission));
                Taken::Armed
            }
            // Its second run in one call: the first has the queries.
            Phase::InQueries(s) if s == submission => Taken::No,
            Phase::InQueries(_) => self.take_read(submission, slots, queries),
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
            log::warn!("a resubmitted command buffer waited {:.1} ms for its last run's timestamps to be read, which the traceq thread had not done when the resubmission came (Lavapipe's vkGetQueryPoolResults waits for the device to go idle, so that read waits for the GPU's work in flight): the application's CPU work stopped overlapping the GPU's there; one-time command buffers are never read at their submission", waited.as_secs_f64() * 1e3);
        }
        let waited_ns = waited.as_nanos() as u64;
        match taken {
            Taken::ReadNow { .. } => Taken::ReadNow { waited_ns },
            Taken::Armed => Taken::ArmedAfterWait { waited_ns },
            other => other,
        }
    }

    /// [`Self::take`] of a trace whose last run was still in the queries: under the lock,
    /// where traceq may have read it meanwhile. The wait is [`Self::take_read`]'s to give:
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
        let mut values = reads.spare.pop().unwrap_or_default();
        values.clear();
        values.resize(slots, 0);
        let read = queries.read(&mut values);
        // Not ready: the application broke the rule (a failure of the driver's is said by
        // traceq when it finds it).
        if read == Err(vk::Result::NOT_READY) && !SAID_PENDING.swap(true, Ordering::Relaxed) {
            log::warn!("a command buffer without SIMULTANEOUS_USE was submitted again before its last run completed (invalid in Vulkan); that run's timestamps are lost, and the new run's may be overwritten by the last one's late writes");
        }
        if (reads.early.len() + 1) * slots.max(1) > EARLY_VALUES {
            if let Some(dropped) = reads.early.pop_front() {
                reads.spare.push(dropped.values);
            }
            if !SAID_BEHIND.swap(true, Ordering::Relaxed) {
                log::warn!("traceq is {} runs behind a command buffer resubmitted in a loop; its oldest runs are dropped and counted", reads.early.len());
            }
        }
        reads.early.push_back(Early {
            submission: earlier,
            values,
            read,
        });
        // SAFETY: the run that wrote them completed (see above); no other run of this
        // trace was submitted since (it would have read them itself).
        unsafe { queries.reset() };
        self.set(Phase::InQueries(submission));
        Taken::ReadNow { waited_ns: 0 }
    }

    /// The run of `submission` goes wrapped after all: the layer's copy reads the queries
    /// and resets them.
    pub fn wrapped(&self, submission: u64) {
        self.set(Phase::Copying(submission));
    }

    /// The submission was not made (the call failed, or the layer gave up preparing it):
    /// queries it took are as they were, reset.
    pub fn not_submitted(&self, submission: u64) {
        if !self.replace(Phase::InQueries(submission), Phase::Armed) {
            self.replace(Phase::Copying(submission), Phase::Unknown);
        }
    }

    /// The completed run of `submission` that left its timestamps in the queries, into
    /// `out`; the queries are reset and the trace armed. Read early if a resubmission
    /// came first. An error if it cannot be had (dropped for room, or lost).
    pub fn read(
        &self,
        submission: u64,
        out: &mut [u64],
        queries: &impl RunQueries,
    ) -> Result<(), vk::Result> {
        let mut reads = lock_for_traceq(&self.reads);
        if self.phase() == Phase::InQueries(submission) {
            let read = queries.read(out);
            // SAFETY: the run completed (traceq waited for it) and no later run was
            // submitted (it would have read the queries first, under this lock).
            unsafe { queries.reset() };
            self.replace(Phase::InQueries(submission), Phase::Armed);
            return read;
        }
        let at = reads.early.iter().position(|e| e.submission == submission);
        let Some(early) = at.and_then(|at| reads.early.remove(at)) else {
            return Err(vk::Result::NOT_READY);
        };
        if early.read.is_ok() {
            let n = out.len().min(early.values.len());
            out[..n].copy_from_slice(&early.values[..n]);
        }
        reads.spare.push(early.values);
        early.read
    }

    /// The completed run of `submission` is not written (outside a capture, or its batch
    /// could not be read): as [`Self::read`], without the values.
    pub fn discard(&self, submission: u64, queries: &impl RunQueries) {
        let mut reads = lock_for_traceq(&self.reads);
        if self.phase() == Phase::InQueries(submission) {
            // SAFETY: as in `read`.
            unsafe { queries.reset() };
            self.replace(Phase::InQueries(submission), Phase::Armed);
        } else if let Some(at) = reads.early.iter().position(|e| e.submission == submission) {
            if let Some(early) = reads.early.remove(at) {
                reads.spare.push(early.values);
            }
        }
    }

    /// The wrapped run of `submission` completed: its copy reset the queries.
    pub fn copied(&self, submission: u64) {
        self.replace(Phase::Copying(submission), Phase::Armed);
    }
}

#[cfg(test)]
mod tests;
