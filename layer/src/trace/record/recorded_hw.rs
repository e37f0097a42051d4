//! A frozen recording's hardware counters (see `record::hardware`): the queries its
//! ranges were counted in, read once a run completed (a reusable recording's between its
//! runs, see `record::hardware_runs`).

use ash::vk;

use super::counter_values::{Counters, HardwareSet, Shown, STATISTICS};
use super::hardware_runs::{armed_runs, HwRuns, Queries};
use super::reruns::{NoWait, Taken};
use crate::gpu::interface::Backend;

/// The query of a range that got none (its pool was used up): it says `partial=1`.
pub const UNMEASURED: u32 = u32::MAX;

/// A frozen recording's hardware counters: read once a run completed.
pub struct RecordedHw {
    pub family: u32,
    pub pool: vk::QueryPool,
    used: u32,
    /// (end event, query), in the order of the events.
    ranges: Vec<(u32, u32)>,
    set: &'static HardwareSet,
    /// A reusable recording's runs (`None`: one-time, its one run read from the queries).
    runs: Option<HwRuns>,
}

impl RecordedHw {
    /// The indices of the trace's events that end a range with counters, in order.
    pub fn range_events(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().map(|r| r.0)
    }

    /// What [`HwRecording::freeze`](super::hardware::HwRecording::freeze) keeps: `pool`
    /// and the queries taken, the ranges (end event, query), and whether it is reusable.
    pub(super) fn new(
        family: u32,
        pool: (vk::QueryPool, u32),
        ranges: Vec<(u32, u32)>,
        set: &'static HardwareSet,
        reusable: bool,
    ) -> RecordedHw {
        RecordedHw {
            family,
            pool: pool.0,
            used: pool.1,
            ranges,
            set,
            // A recording that used no query has nothing to read or reset between runs.
            runs: (reusable && pool.1 > 0).then(armed_runs),
        }
    }

    /// Each range's counters, read from the queries (after the one run completed); `None`
    /// when the read failed.
    pub(super) fn read(&self, backend: &Backend) -> Option<Vec<Counters>> {
        if self.ranges.is_empty() {
            return Some(Vec::new());
        }
        let per_query = self.set.keys.len();
        let mut raw = vec![0u64; self.used as usize * per_query];
        if let Err(e) = backend.read_perf(self.pool, self.used, &mut raw) {
            read_failed_once(e);
            return None;
        }
        Some(self.ranges_of(&raw))
    }

    /// Each range's counters from all the queries' results `raw`.
    pub(super) fn ranges_of(&self, raw: &[u64]) -> Vec<Counters> {
        self.ranges
            .iter()
            .map(|&(_, q)| self.counters(raw, q as usize))
            .collect()
    }

    /// Query `q`'s counters from all the queries' results `raw`.
    pub(super) fn counters(&self, raw: &[u64], q: usize) -> Counters {
        if q == UNMEASURED as usize {
            return Counters {
                shown: Shown::Hardware,
                values: [0; STATISTICS],
                partial: true,
                measured: false,
                mesh: false,
                hardware: Some(self.set),
            };
        }
        let per_query = self.set.keys.len();
        let mut values = [0u64; STATISTICS];
        for (v, r) in values
            .iter_mut()
            .zip(&raw[q * per_query..(q + 1) * per_query])
        {
            *v = *r;
        }
        Counters {
            shown: Shown::Hardware,
            values,
            partial: false,
            measured: true,
            mesh: false,
            hardware: Some(self.set),
        }
    }
}

/// Between runs (see `record::hardware_runs`).
impl RecordedHw {
    fn queries<'a>(&'a self, backend: &'a Backend) -> Queries<'a> {
        Queries {
            pool: (self.pool, self.used),
            backend,
        }
    }

    /// The values one run leaves: each of its queries' counters.
    fn run_values(&self) -> usize {
        self.used as usize * self.set.keys.len()
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
                read_failed_once(e);
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

/// Says, once per process, that a read of hardware counters failed.
fn read_failed_once(e: vk::Result) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        log::warn!("hardware counters could not be read ({e}): those ranges go without");
    }
}
