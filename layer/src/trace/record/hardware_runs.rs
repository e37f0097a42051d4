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

use super::reruns::{Reruns, RunQueries, SavedRun};
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
pub struct Queries<'a> {
    /// The pool, and the queries the recording used.
    pub pool: (vk::QueryPool, u32),
    pub backend: &'a Backend,
}

impl RunQueries for Queries<'_> {
    fn read(&self, out: &mut [u64]) -> Result<(), vk::Result> {
        self.backend.read_perf(self.pool.0, self.pool.1, out)
    }

    unsafe fn reset(&self) {
        // SAFETY: host reset is on wherever hardware counters are, and no pending work
        // uses the queries (the caller's promise).
        unsafe { self.backend.reset_queries(self.pool.0, PERF_POOL_QUERIES) };
    }
}
