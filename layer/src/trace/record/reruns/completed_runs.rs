//! What traceq does with a tracked trace's run once its batch completed: read it (from the
//! queries, or from wherever a resubmission put it), or let it go unread, and arm the
//! trace again (see `super::Reruns`).

use std::time::{Duration, Instant};

use ash::vk;
use parking_lot::Mutex;

use super::early_runs::{EarlyRuns, Found, SavedRun, Values};
use super::phase::Phase;
use super::{NoWait, Quiet, Reruns, RunQueries};

/// How long traceq waits for a submission that saves the run it wants to be made (it is
/// inside the application's submit call) before it counts the run lost.
const SAVING_WAIT: Duration = Duration::from_secs(1);
/// How many times traceq lets newer work settle before a read it found the device busy
/// for: an application that never lets the device idle must still have its runs read.
const MAX_SETTLES: u32 = 4;

/// The lock as traceq takes it: spinning and yielding, never parked, so that a submitting
/// thread that held it never has to wake traceq on its way out (a futex call on the
/// application's time). The submitting side takes it plainly: it waits only while traceq
/// reads this trace's few queries.
fn lock_for_traceq<S>(reads: &Mutex<EarlyRuns<S>>) -> parking_lot::MutexGuard<'_, EarlyRuns<S>> {
    loop {
        if let Some(guard) = reads.try_lock() {
            return guard;
        }
        std::thread::yield_now();
    }
}

/// Where traceq found a completed run.
enum Completed<S> {
    /// In the queries: handed over, the queries reset and the trace armed.
    InQueries,
    /// Read by a resubmission: its values, or why they could not be read.
    Read(Vec<u64>, Result<(), vk::Result>),
    /// Saved by the GPU.
    Saved(S),
    /// Dropped for room, or never had.
    Lost,
}

impl<S: SavedRun> Reruns<S> {
    /// The completed run of `submission` that left its timestamps in the queries, into
    /// `out`; the queries are reset and the trace armed. Taken early if a resubmission came
    /// first (read by it, or saved by the GPU: then waited for). An error if it cannot be
    /// had (dropped for room, or lost).
    #[cfg(test)]
    pub fn read(
        &self,
        submission: u64,
        out: &mut [u64],
        queries: &impl RunQueries,
    ) -> Result<(), vk::Result> {
        self.read_settled(submission, out, queries, &mut NoWait)
    }

    /// [`Self::read`], where `quiet` says whether the device has work newer than the last it
    /// settled for, which a read left in the queries would wait for under the lock: that
    /// work is waited for first, without it.
    pub fn read_settled(
        &self,
        submission: u64,
        out: &mut [u64],
        queries: &impl RunQueries,
        quiet: &mut dyn Quiet,
    ) -> Result<(), vk::Result> {
        let mut read = Ok(());
        match self.take_completed(submission, queries, quiet, || read = queries.read(out)) {
            Completed::InQueries => {
                // The trace is resubmitted: its next run may be read early, by a
                // submission, which must then find a list to read into (allocated here,
                // on traceq's time, once).
                lock_for_traceq(&self.reads).provision(out.len());
                read
            }
            Completed::Read(values, read) => {
                if read.is_ok() {
                    let n = out.len().min(values.len());
                    out[..n].copy_from_slice(&values[..n]);
                }
                lock_for_traceq(&self.reads).give(values);
                read
            }
            Completed::Saved(saved) => saved.finish(Some(out)),
            Completed::Lost => Err(vk::Result::NOT_READY),
        }
    }

    /// The completed run of `submission` is not written (outside a capture, or its batch
    /// could not be read): as [`Self::read`], without the values.
    pub fn discard(&self, submission: u64, queries: &impl RunQueries) {
        match self.take_completed(submission, queries, &mut NoWait, || {}) {
            Completed::Read(values, _) => lock_for_traceq(&self.reads).give(values),
            // Only its resources back: the error would be the batch's, not written.
            Completed::Saved(saved) => {
                let _ = saved.finish(None);
            }
            Completed::InQueries | Completed::Lost => {}
        }
    }

    /// The completed run of `submission`, wherever it is: still in the queries, it is
    /// handed to `in_queries` under the lock, then the queries are reset and the trace
    /// armed; taken early, it is taken out (waiting while a submission that saves it is
    /// being made).
    fn take_completed(
        &self,
        submission: u64,
        queries: &impl RunQueries,
        quiet: &mut dyn Quiet,
        in_queries: impl FnOnce(),
    ) -> Completed<S> {
        let mut in_queries = Some(in_queries);
        let mut saving_since: Option<Instant> = None;
        let mut settles = 0;
        loop {
            let mut reads = lock_for_traceq(&self.reads);
            if self.phase() == Phase::InQueries(submission) {
                // Checked again here, under the lock: work submitted since traceq let the
                // device settle (the application's next frame, while traceq was on its
                // way here) would hold the read, and a resubmission behind it.
                if settles < MAX_SETTLES && quiet.newer_work() {
                    drop(reads);
                    quiet.settle();
                    settles += 1;
                    continue;
                }
                // Under the lock, even where the read waits for all the device's work: a
                // resubmission's GPU work on these queries (a save, the new run) running
                // while the driver reads them makes it read them wrong (seen on Lavapipe).
                if let Some(hand_over) = in_queries.take() {
                    hand_over();
                }
                // SAFETY: the run completed (traceq waited for it) and no later run was
                // submitted (it would have taken the queries first, under this lock).
                unsafe { queries.reset() };
                self.replace(Phase::InQueries(submission), Phase::Armed);
                return Completed::InQueries;
            }
            match reads.take(submission) {
                Found::Taken(Values::Read(values, read)) => return Completed::Read(values, read),
                Found::Taken(Values::Saved(saved)) => return Completed::Saved(saved),
                Found::Missing | Found::Taken(Values::Saving { .. }) => return Completed::Lost,
                Found::Saving => {
                    drop(reads);
                    if saving_since.get_or_insert_with(Instant::now).elapsed() >= SAVING_WAIT {
                        return Completed::Lost;
                    }
                    std::thread::yield_now();
                }
            }
        }
    }

    /// The wrapped run of `submission` completed: its copy reset the queries.
    pub fn copied(&self, submission: u64) {
        self.replace(Phase::Copying(submission), Phase::Armed);
    }
}
