//! A reusable command buffer's hardware counters between its runs (see `record::hardware`).
//!
//! A performance query may not be reset by the command buffer that begins it, and drivers
//! rarely let one be copied on the GPU, so each run's values are read on the host and the
//! queries reset there before the next run, with the same bookkeeping as a tracked trace's
//! timestamps ([`Reruns`]): traceq reads a completed run and re-arms the queries, and a
//! resubmission that comes first reads the last run itself (Vulkan made it wait for that
//! run: a counted command buffer is not `SIMULTANEOUS_USE`) and keeps the values for
//! traceq. Never saved by the GPU, whatever the device.

use ash::vk;

use super::counter_values::Counters;
use super::hardware::RecordedHw;
use super::reruns::{NoWait, Reruns, RunQueries, SavedRun, Taken};
use crate::gpu::interface::Backend;
use crate::gpu::perf_queries::PERF_POOL_QUERIES;

/// No run of hardware counters is saved by the GPU: a type without values.
pub enum NeverSaved {}

impl SavedRun for NeverSaved {
    type Completion = ();
    fn made(&mut self, _: ()) {
        match *self {}
    }
    fn finish(self, _: Option<&mut [u64]>) -> Result<(), vk::Result> {
        match self {}
    }
    fn unused(self) {
        match self {}
    }
}

/// The runs of a reusable recording's hardware counter queries.
pub type HwRuns = Reruns<NeverSaved>;

/// Runs that start with the queries reset (a pool comes reset), read on the host.
pub fn armed_runs() -> HwRuns {
    let mut runs = HwRuns::default();
    runs.restart(true, false);
    runs
}

/// A recording's queries as its runs use them.
struct Queries<'a> {
    hw: &'a RecordedHw,
    backend: &'a Backend,
}

impl RunQueries for Queries<'_> {
    fn read(&self, out: &mut [u64]) -> Result<(), vk::Result> {
        self.backend.read_perf(self.hw.pool, self.hw.used(), out)
    }

    unsafe fn reset(&self) {
        // SAFETY: host reset is on wherever hardware counters are, and no pending work
        // uses the queries (the caller's promise).
        unsafe { self.backend.reset_queries(self.hw.pool, PERF_POOL_QUERIES) };
    }
}

impl RecordedHw {
    fn queries<'a>(&'a self, backend: &'a Backend) -> Queries<'a> {
        Queries { hw: self, backend }
    }

    /// The values one run leaves: each of its queries' counters.
    fn run_values(&self) -> usize {
        self.used() as usize * self.set().keys.len()
    }

    /// The run of `submission` is about to be submitted: a reusable recording's queries
    /// are reset first, its last run read now if traceq has not had it.
    pub fn take_run(&self, submission: u64, backend: &Backend) {
        if let Some(runs) = &self.runs {
            let taken = runs.take(submission, self.run_values(), &self.queries(backend));
            if taken == Taken::No {
                // A second run in one call, which Vulkan forbids without SIMULTANEOUS_USE.
                log::debug!("a counted command buffer runs twice in one submission: its second run's hardware counters are the first's");
            }
        }
    }

    /// The submission went down without the layer's part: its run writes the queries,
    /// unread; the next run resets them.
    pub fn ran_untimed(&self, submission: u64, backend: &Backend) {
        if let Some(runs) = &self.runs {
            runs.ran_untimed(submission, self.run_values(), &self.queries(backend));
        }
    }

    /// The submission was not made.
    pub fn not_submitted(&self, submission: u64) {
        if let Some(runs) = &self.runs {
            runs.not_submitted(submission);
        }
    }

    /// Each range's counters of the completed run of `submission`: a one-time recording's
    /// read from its queries, a reusable one's from wherever the run is now (its queries
    /// then reset for the next run); `None` when they could not be had.
    pub fn read_run(&self, submission: u64, backend: &Backend) -> Option<Vec<Counters>> {
        let Some(runs) = &self.runs else {
            return self.read(backend);
        };
        let mut raw = vec![0u64; self.run_values()];
        let queries = self.queries(backend);
        match runs.read_settled(submission, &mut raw, &queries, &mut NoWait) {
            Ok(()) => Some(self.ranges_of(&raw)),
            Err(e) => {
                super::hardware::read_failed_once(e);
                None
            }
        }
    }

    /// The completed run of `submission` is done with, read or not: a reusable recording's
    /// queries are reset for the next run if nothing read them.
    pub fn run_done(&self, submission: u64, backend: &Backend) {
        if let Some(runs) = &self.runs {
            runs.discard(submission, &self.queries(backend));
        }
    }
}
