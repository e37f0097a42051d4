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
//! One small lock per trace, taken by the thread submitting its command buffer (which
//! Vulkan already serialises) and by traceq: never shared between recording threads.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// The last run was still in the queries: read now, and the queries reset.
    ReadNow,
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

/// A run read by a later submission: its values, or why they could not be read.
struct Early {
    submission: u64,
    values: Vec<u64>,
    read: Result<(), vk::Result>,
}

struct State {
    phase: Phase,
    /// Runs read by a later submission before traceq had them.
    early: VecDeque<Early>,
    /// Emptied value lists, kept so that reading early allocates nothing in the steady state.
    spare: Vec<Vec<u64>>,
}

pub struct Reruns {
    state: Mutex<State>,
}

/// The lock as traceq takes it: spinning and yielding, never parked, so that a submitting
/// thread that held it never has to wake traceq on its way out (a futex call on the
/// application's time). The submitting side takes it plainly: it waits only while traceq
/// reads this trace's few queries.
fn lock_for_traceq(state: &Mutex<State>) -> parking_lot::MutexGuard<'_, State> {
    loop {
        if let Some(guard) = state.try_lock() {
            return guard;
        }
        std::thread::yield_now();
    }
}

/// An early run was dropped for room (said once per process).
static SAID_BEHIND: AtomicBool = AtomicBool::new(false);
/// A run was not complete when its command buffer was submitted again (said once).
static SAID_PENDING: AtomicBool = AtomicBool::new(false);

impl Default for Reruns {
    fn default() -> Self {
        Reruns {
            state: Mutex::new(State {
                phase: Phase::Unknown,
                early: VecDeque::new(),
                spare: Vec::new(),
            }),
        }
    }
}

impl Reruns {
    /// A new recording: `armed` when the trace is tracked (its queries were handed out
    /// reset); runs read early for the last recording are forgotten.
    pub fn restart(&mut self, armed: bool) {
        let state = self.state.get_mut();
        state.phase = if armed { Phase::Armed } else { Phase::Unknown };
        while let Some(early) = state.early.pop_front() {
            state.spare.push(early.values);
        }
    }

    /// The run of `submission` being prepared: whether its queries are reset (the run may
    /// go without a copy, and is taken to: see [`Self::wrapped`] otherwise). A run still in
    /// the queries is read now (`slots` values) and the queries reset: the application
    /// waited for it to complete before submitting again.
    pub fn take(&self, submission: u64, slots: usize, queries: &impl RunQueries) -> Taken {
        let mut state = self.state.lock();
        let taken = match state.phase {
            Phase::Armed => Taken::Armed,
            // Its second run in one call: the first has the queries.
            Phase::InQueries(s) if s == submission => return Taken::No,
            Phase::InQueries(earlier) => {
                let mut values = state.spare.pop().unwrap_or_default();
                values.clear();
                values.resize(slots, 0);
                let read = queries.read(&mut values);
                // Not ready: the application broke the rule (a failure of the driver's is
                // said by traceq when it finds it).
                if read == Err(vk::Result::NOT_READY) && !SAID_PENDING.swap(true, Ordering::Relaxed)
                {
                    log::warn!("a command buffer without SIMULTANEOUS_USE was submitted again before its last run completed (invalid in Vulkan); that run's timestamps are lost, and the new run's may be overwritten by the last one's late writes");
                }
                if (state.early.len() + 1) * slots.max(1) > EARLY_VALUES {
                    if let Some(dropped) = state.early.pop_front() {
                        state.spare.push(dropped.values);
                    }
                    if !SAID_BEHIND.swap(true, Ordering::Relaxed) {
                        log::warn!("traceq is {} runs behind a command buffer resubmitted in a loop; its oldest runs are dropped and counted", state.early.len());
                    }
                }
                state.early.push_back(Early {
                    submission: earlier,
                    values,
                    read,
                });
                // SAFETY: the run that wrote them completed (see above); no other run of
                // this trace was submitted since (it would have read them itself).
                unsafe { queries.reset() };
                Taken::ReadNow
            }
            Phase::Copying(_) | Phase::Unknown => return Taken::No,
        };
        state.phase = Phase::InQueries(submission);
        taken
    }

    /// The run of `submission` goes wrapped after all: the layer's copy reads the queries
    /// and resets them.
    pub fn wrapped(&self, submission: u64) {
        self.state.lock().phase = Phase::Copying(submission);
    }

    /// The submission was not made (the call failed, or the layer gave up preparing it):
    /// queries it took are as they were, reset.
    pub fn not_submitted(&self, submission: u64) {
        let mut state = self.state.lock();
        state.phase = match state.phase {
            Phase::InQueries(s) if s == submission => Phase::Armed,
            Phase::Copying(s) if s == submission => Phase::Unknown,
            other => other,
        };
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
        let mut state = lock_for_traceq(&self.state);
        if state.phase == Phase::InQueries(submission) {
            let read = queries.read(out);
            // SAFETY: the run completed (traceq waited for it) and no later run was
            // submitted (it would have read the queries first).
            unsafe { queries.reset() };
            state.phase = Phase::Armed;
            return read;
        }
        let at = state.early.iter().position(|e| e.submission == submission);
        let Some(early) = at.and_then(|at| state.early.remove(at)) else {
            return Err(vk::Result::NOT_READY);
        };
        if early.read.is_ok() {
            let n = out.len().min(early.values.len());
            out[..n].copy_from_slice(&early.values[..n]);
        }
        state.spare.push(early.values);
        early.read
    }

    /// The completed run of `submission` is not written (outside a capture, or its batch
    /// could not be read): as [`Self::read`], without the values.
    pub fn discard(&self, submission: u64, queries: &impl RunQueries) {
        let mut state = lock_for_traceq(&self.state);
        if state.phase == Phase::InQueries(submission) {
            // SAFETY: as in `read`.
            unsafe { queries.reset() };
            state.phase = Phase::Armed;
        } else if let Some(at) = state.early.iter().position(|e| e.submission == submission) {
            if let Some(early) = state.early.remove(at) {
                state.spare.push(early.values);
            }
        }
    }

    /// The wrapped run of `submission` completed: its copy reset the queries.
    pub fn copied(&self, submission: u64) {
        let mut state = lock_for_traceq(&self.state);
        if state.phase == Phase::Copying(submission) {
            state.phase = Phase::Armed;
        }
    }
}

#[cfg(test)]
mod tests;
