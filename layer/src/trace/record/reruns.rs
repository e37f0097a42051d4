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
                    log::warn!("a command buffer without SIMULTANEOUS_USE was submitted again before its last run completed; that run's timestamps are lost");
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
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    /// Queries that hold `value` in every slot once written, and count resets.
    #[derive(Default)]
    struct Fake {
        value: Cell<Option<u64>>,
        resets: Cell<u32>,
        reads: RefCell<Vec<u64>>,
    }

    impl Fake {
        fn run(&self, value: u64) {
            assert_eq!(self.value.get(), None, "written only when reset");
            self.value.set(Some(value));
        }
    }

    impl RunQueries for Fake {
        fn read(&self, out: &mut [u64]) -> Result<(), vk::Result> {
            let v = self.value.get().ok_or(vk::Result::NOT_READY)?;
            out.fill(v);
            self.reads.borrow_mut().push(v);
            Ok(())
        }
        unsafe fn reset(&self) {
            self.value.set(None);
            self.resets.set(self.resets.get() + 1);
        }
    }

    fn armed() -> Reruns {
        let mut r = Reruns::default();
        r.restart(true);
        r
    }

    #[test]
    fn a_run_read_by_traceq_arms_the_next() {
        let (r, q) = (armed(), Fake::default());
        assert_ne!(r.take(1, 2, &q), Taken::No);
        q.run(10);
        let mut out = [0; 2];
        r.read(1, &mut out, &q).unwrap();
        assert_eq!(out, [10, 10]);
        assert_eq!(q.resets.get(), 1, "traceq reset them");
        assert_eq!(r.take(2, 2, &q), Taken::Armed, "armed again");
        assert_eq!(
            q.reads.borrow().len(),
            1,
            "nothing read at the resubmission"
        );
    }

    #[test]
    fn a_resubmission_before_traceq_reads_the_last_run_for_it() {
        let (r, q) = (armed(), Fake::default());
        for (submission, value) in [(1, 10), (2, 20), (3, 30)] {
            let expected = if submission == 1 {
                Taken::Armed
            } else {
                Taken::ReadNow
            };
            assert_eq!(
                r.take(submission, 2, &q),
                expected,
                "run {submission} needs no copy"
            );
            q.run(value);
        }
        // traceq comes now, in order: the first two were read early, the last is in place.
        for (submission, value) in [(1, 10), (2, 20), (3, 30)] {
            let mut out = [0; 2];
            r.read(submission, &mut out, &q).unwrap();
            assert_eq!(out, [value; 2], "run {submission}");
        }
        assert_ne!(r.take(4, 2, &q), Taken::No);
    }

    #[test]
    fn traceq_finds_an_early_run_whatever_the_order() {
        let (r, q) = (armed(), Fake::default());
        for (submission, value) in [(1, 10), (2, 20)] {
            assert_ne!(r.take(submission, 1, &q), Taken::No);
            q.run(value);
        }
        assert_ne!(r.take(3, 1, &q), Taken::No);
        q.run(30);
        let mut out = [0; 1];
        r.read(2, &mut out, &q).unwrap();
        assert_eq!(out, [20]);
        r.read(1, &mut out, &q).unwrap();
        assert_eq!(out, [10]);
        assert_eq!(r.read(1, &mut out, &q), Err(vk::Result::NOT_READY), "once");
    }

    #[test]
    fn a_wrapped_run_is_not_armed_until_its_copy_completed() {
        let (r, q) = (armed(), Fake::default());
        assert_ne!(r.take(1, 1, &q), Taken::No);
        r.wrapped(1);
        assert_eq!(r.take(2, 1, &q), Taken::No, "the copy may not have run yet");
        r.wrapped(2);
        r.copied(1);
        assert_eq!(
            r.take(3, 1, &q),
            Taken::No,
            "an older copy says nothing of the last"
        );
        r.wrapped(3);
        r.copied(3);
        assert_ne!(r.take(4, 1, &q), Taken::No);
    }

    #[test]
    fn a_failed_submission_leaves_the_queries_armed() {
        let (r, q) = (armed(), Fake::default());
        assert_ne!(r.take(1, 1, &q), Taken::No);
        r.not_submitted(1);
        assert_ne!(r.take(2, 1, &q), Taken::No);
        r.not_submitted(2);
        assert_ne!(r.take(3, 1, &q), Taken::No);
        r.wrapped(3);
        r.not_submitted(3);
        assert_eq!(r.take(4, 1, &q), Taken::No, "a failed wrapped run: unknown");
    }

    #[test]
    fn an_unread_run_not_written_is_discarded_and_rearmed() {
        let (r, q) = (armed(), Fake::default());
        assert_ne!(r.take(1, 1, &q), Taken::No);
        q.run(10);
        r.discard(1, &q);
        assert_ne!(r.take(2, 1, &q), Taken::No);
        assert!(q.reads.borrow().is_empty());
        q.run(20);
        assert_eq!(r.take(3, 1, &q), Taken::ReadNow);
        r.discard(2, &q);
        let mut out = [0; 1];
        assert_eq!(r.read(2, &mut out, &q), Err(vk::Result::NOT_READY));
    }

    #[test]
    fn a_run_not_complete_at_its_resubmission_is_lost_not_misread() {
        let (r, q) = (armed(), Fake::default());
        assert_ne!(r.take(1, 1, &q), Taken::No);
        // The application broke the rule: its run has not written yet.
        assert_ne!(r.take(2, 1, &q), Taken::No);
        let mut out = [0; 1];
        assert_eq!(r.read(1, &mut out, &q), Err(vk::Result::NOT_READY));
    }

    #[test]
    fn a_failed_read_at_resubmission_reaches_traceq_with_its_error() {
        struct Lost;
        impl RunQueries for Lost {
            fn read(&self, _: &mut [u64]) -> Result<(), vk::Result> {
                Err(vk::Result::ERROR_DEVICE_LOST)
            }
            unsafe fn reset(&self) {}
        }
        let r = armed();
        assert_eq!(r.take(1, 1, &Lost), Taken::Armed);
        assert_eq!(r.take(2, 1, &Lost), Taken::ReadNow);
        let mut out = [0; 1];
        assert_eq!(
            r.read(1, &mut out, &Lost),
            Err(vk::Result::ERROR_DEVICE_LOST)
        );
    }

    #[test]
    fn untracked_traces_are_never_armed_and_early_runs_are_bounded() {
        let mut r = Reruns::default();
        let q = Fake::default();
        assert_eq!(r.take(1, 1, &q), Taken::No);
        r.restart(true);
        let slots = 1024;
        let most = EARLY_VALUES / slots;
        for s in 1..=(most as u64 + 2) {
            assert_ne!(r.take(s, slots, &q), Taken::No);
            q.run(s);
        }
        let early = r.state.lock().early.len();
        assert_eq!(early, most);
        let mut out = vec![0; slots];
        assert!(r.read(1, &mut out, &q).is_err(), "the oldest was dropped");
        r.read(2, &mut out, &q).unwrap();
        assert_eq!(out, vec![2; slots]);
    }
}
