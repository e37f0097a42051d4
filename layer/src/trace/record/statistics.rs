//! Pipeline statistics beside a command buffer's ranges (`GPU_TRACE_COUNTERS=pipeline`):
//! the queries a recording takes ([`StatsRecording`]), what it leaves to its frozen trace
//! ([`RecordedStats`]), and the device's pools of them ([`StatsPools`]).
//!
//! One statistics query may be active in a command buffer at a time, so queries go on the
//! innermost level that gets them (each dispatch; each subpass of a render pass), and an
//! enclosing range (the command buffer) gets the sum of the queries inside it. So far only
//! one-time primary command buffers get them: their single run is read on the traceq
//! thread from the queries, after the batch completed.

use ash::vk;
use parking_lot::Mutex;
use smallvec::SmallVec;

use crate::gpu::interface::Backend;
use crate::gpu::statistics_queries::{COMPUTE, POOL_QUERIES};

/// The statistics one range gets, in a fixed order (names in [`Counters::NAMES`]).
pub const STATISTICS: usize = 7;

/// What a range shows: the graphics statistics, the compute one, or all (the command
/// buffer's sum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    Graphics,
    Compute,
    All,
}

/// One range's pipeline statistics, as an output prints them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counters {
    pub shown: Shown,
    /// In the order of [`Self::NAMES`].
    pub values: [u64; STATISTICS],
    /// An application's own statistics query overlapped the range: the values leave its
    /// part out (`measured` false: all of it).
    pub partial: bool,
    /// Some of the range was measured (else only `partial` is shown).
    pub measured: bool,
}

impl Counters {
    /// The statistics' names in outputs (Vulkan's, in snake case).
    pub const NAMES: [&'static str; STATISTICS] = [
        "input_vertices",
        "input_primitives",
        "vertex_invocations",
        "clipping_invocations",
        "clipping_primitives",
        "fragment_invocations",
        "compute_invocations",
    ];

    /// The (name, value) pairs this range shows: its statistics where measured, then
    /// `partial=1` where an application's own query overlapped it.
    pub fn shown(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        let measured = if self.measured {
            self.statistics()
        } else {
            0..0
        };
        measured
            .map(|i| (Self::NAMES[i], self.values[i]))
            .chain(self.partial.then_some(("partial", 1)))
    }

    fn statistics(&self) -> std::ops::Range<usize> {
        match self.shown {
            Shown::Graphics => 0..STATISTICS - 1,
            Shown::Compute => STATISTICS - 1..STATISTICS,
            Shown::All => 0..STATISTICS,
        }
    }
}

/// One query taken by a recording: its pool (an index into the recording's pools) and
/// index in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    pub pool: u32,
    pub query: u32,
}

/// A range that gets statistics: its end event and the queries summed into it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatsRange {
    /// The end event's index among the trace's events.
    pub event: u32,
    /// Which of [`RecordedStats::queries`] are summed (`first..first + count`).
    pub first: u32,
    pub count: u32,
    pub shown: Shown,
    /// An application's own statistics query overlapped it.
    pub partial: bool,
}

/// The statistics of one recording in progress.
pub struct StatsRecording {
    pub statistics: vk::QueryPipelineStatisticFlags,
    pools: Vec<vk::QueryPool>,
    /// Queries taken from the last pool.
    used_in_last: u32,
    /// The query active in the command buffer.
    pub active: Option<Query>,
    /// Ended, waiting for their range's end event.
    pending: SmallVec<[Query; 4]>,
    queries: Vec<Query>,
    ranges: Vec<StatsRange>,
    /// An application's own statistics query is active: none of the layer's may begin.
    pub application_active: bool,
    /// The layer's query was ended for the application's: begun again at its end.
    pub resume_after_application: bool,
    /// The open range overlapped an application's query.
    pub partial: bool,
}

impl StatsRecording {
    pub fn new(statistics: vk::QueryPipelineStatisticFlags) -> StatsRecording {
        StatsRecording {
            statistics,
            pools: Vec::new(),
            used_in_last: POOL_QUERIES,
            active: None,
            pending: SmallVec::new(),
            queries: Vec::new(),
            ranges: Vec::new(),
            application_active: false,
            resume_after_application: false,
            partial: false,
        }
    }

    /// The next query (a new pool from `pools` when the last is full): its handle and place;
    /// `None` when no pool could be had.
    pub fn take(&mut self, pools: &StatsPools) -> Option<(vk::QueryPool, Query)> {
        if self.used_in_last == POOL_QUERIES {
            self.pools.push(pools.acquire(self.statistics)?);
            self.used_in_last = 0;
        }
        let query = Query {
            pool: self.pools.len() as u32 - 1,
            query: self.used_in_last,
        };
        self.used_in_last += 1;
        Some((self.pools[query.pool as usize], query))
    }

    /// The handle of `query`'s pool.
    pub fn pool_of(&self, query: Query) -> vk::QueryPool {
        self.pools[query.pool as usize]
    }

    /// The active query was ended: its values go to the next range closed.
    pub fn ended(&mut self, query: Query) {
        self.pending.push(query);
    }

    /// The queries ended since the last range go to the range ending at event `event`
    /// (or nowhere, with `None`: its end event was not recorded).
    pub fn close(&mut self, event: Option<u32>, shown: Shown) {
        let partial = std::mem::take(&mut self.partial);
        let Some(event) = event else {
            self.pending.clear();
            return;
        };
        if self.pending.is_empty() && !partial {
            return;
        }
        let first = self.queries.len() as u32;
        self.queries.extend(self.pending.drain(..));
        self.ranges.push(StatsRange {
            event,
            first,
            count: self.queries.len() as u32 - first,
            shown,
            partial,
        });
    }

    /// The recording's end: the command buffer's own range (event `event`) sums every
    /// query. Frozen into what the trace keeps.
    pub fn freeze(mut self, event: Option<u32>) -> RecordedStats {
        self.pending.clear();
        let partial = self.ranges.iter().any(|r| r.partial);
        if let (Some(event), true) = (event, !self.queries.is_empty() || partial) {
            self.ranges.push(StatsRange {
                event,
                first: 0,
                count: self.queries.len() as u32,
                shown: Shown::All,
                partial,
            });
        }
        RecordedStats {
            statistics: self.statistics,
            pools: self.pools,
            used_in_last: self.used_in_last,
            queries: self.queries,
            ranges: self.ranges,
        }
    }

    /// The pools of a recording that was never frozen (reset, or freed), for
    /// [`StatsPools::release`].
    pub fn into_pools(self) -> Vec<vk::QueryPool> {
        self.pools
    }
}

/// A frozen recording's statistics: read once its run completed.
pub struct RecordedStats {
    pub statistics: vk::QueryPipelineStatisticFlags,
    pub pools: Vec<vk::QueryPool>,
    used_in_last: u32,
    pub queries: Vec<Query>,
    pub ranges: Vec<StatsRange>,
}

impl RecordedStats {
    /// Each range's counters, read from the queries (after the run completed); `None` for
    /// all when a read failed.
    pub fn read(&self, backend: &Backend) -> Option<Vec<Counters>> {
        let per_query = self.statistics.as_raw().count_ones();
        let mut values: Vec<[u64; STATISTICS]> = Vec::new();
        let mut raw = vec![0u64; (POOL_QUERIES * per_query) as usize];
        for (i, &pool) in self.pools.iter().enumerate() {
            let count = if i + 1 == self.pools.len() {
                self.used_in_last
            } else {
                POOL_QUERIES
            };
            let out = &mut raw[..(count * per_query) as usize];
            backend.read_statistics(pool, count, per_query, out).ok()?;
            for q in out.chunks_exact(per_query as usize) {
                values.push(in_order(self.statistics, q));
            }
        }
        let index = |q: &Query| q.pool as usize * POOL_QUERIES as usize + q.query as usize;
        let sums = self
            .ranges
            .iter()
            .map(|r| {
                let mut sum = [0u64; STATISTICS];
                for q in &self.queries[r.first as usize..(r.first + r.count) as usize] {
                    for (s, v) in sum
                        .iter_mut()
                        .zip(values.get(index(q)).unwrap_or(&[0; STATISTICS]))
                    {
                        *s += v;
                    }
                }
                Counters {
                    shown: r.shown,
                    values: sum,
                    partial: r.partial,
                    measured: r.count > 0,
                }
            })
            .collect();
        Some(sums)
    }
}

/// A query's values in the order of [`Counters::NAMES`] (a compute-only pool writes the
/// compute statistic alone).
fn in_order(statistics: vk::QueryPipelineStatisticFlags, written: &[u64]) -> [u64; STATISTICS] {
    let mut out = [0u64; STATISTICS];
    if statistics == COMPUTE {
        out[STATISTICS - 1] = written.first().copied().unwrap_or(0);
    } else {
        for (o, v) in out.iter_mut().zip(written) {
            *o = *v;
        }
    }
    out
}

/// A device's statistics pools: those no trace holds (reset), by their statistics, and
/// every one made (destroyed with the device).
#[derive(Default)]
pub struct StatsPools {
    free: Mutex<Vec<(vk::QueryPipelineStatisticFlags, vk::QueryPool)>>,
    all: Mutex<Vec<vk::QueryPool>>,
    backend: Option<Backend>,
}

impl StatsPools {
    pub fn new(backend: Backend) -> StatsPools {
        StatsPools {
            backend: Some(backend),
            ..Default::default()
        }
    }

    /// A reset pool of `statistics`.
    fn acquire(&self, statistics: vk::QueryPipelineStatisticFlags) -> Option<vk::QueryPool> {
        {
            let mut free = self.free.lock();
            if let Some(i) = free.iter().position(|(s, _)| *s == statistics) {
                return Some(free.swap_remove(i).1);
            }
        }
        let backend = self.backend.as_ref()?;
        match backend.create_statistics_pool(statistics) {
            Ok(pool) => {
                self.all.lock().push(pool);
                Some(pool)
            }
            Err(e) => {
                log::warn!("a pipeline statistics query pool could not be made ({e}); ranges go without counters");
                None
            }
        }
    }

    /// Takes back pools no pending work uses, resetting them on the host.
    pub fn release(&self, statistics: vk::QueryPipelineStatisticFlags, pools: Vec<vk::QueryPool>) {
        let Some(backend) = self.backend.as_ref() else {
            return;
        };
        let mut free = self.free.lock();
        for pool in pools {
            // SAFETY: host reset is on wherever statistics are made (`statistics_for`), and
            // no pending work uses the pool (the caller's promise).
            unsafe { backend.reset_queries(pool, POOL_QUERIES) };
            free.push((statistics, pool));
        }
    }

    /// Destroys every pool (device teardown, no work pending).
    pub fn destroy_all(&self) {
        self.free.lock().clear();
        if let Some(backend) = self.backend.as_ref() {
            for pool in self.all.lock().drain(..) {
                backend.destroy_query_chunk(pool);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::statistics_queries::GRAPHICS;

    #[test]
    fn ranges_sum_their_queries_and_the_command_buffer_sums_all() {
        let mut s = StatsRecording::new(GRAPHICS);
        // Two queries (a render pass of two subpasses), one range; then one more.
        let q = |i| Query { pool: 0, query: i };
        s.ended(q(0));
        s.ended(q(1));
        s.close(Some(5), Shown::Graphics);
        s.ended(q(2));
        s.close(None, Shown::Compute);
        s.ended(q(3));
        s.close(Some(9), Shown::Compute);
        let r = s.freeze(Some(10));
        assert_eq!(
            r.ranges,
            [
                range(5, 0, 2, Shown::Graphics, false),
                range(9, 2, 1, Shown::Compute, false),
                range(10, 0, 3, Shown::All, false),
            ]
        );
        assert_eq!(
            r.queries,
            [q(0), q(1), q(3)],
            "a range with no end event counts nowhere"
        );
    }

    #[test]
    fn a_compute_pool_writes_its_one_statistic_last() {
        assert_eq!(in_order(COMPUTE, &[42]), [0, 0, 0, 0, 0, 0, 42]);
        assert_eq!(
            in_order(GRAPHICS, &[1, 2, 3, 4, 5, 6, 7]),
            [1, 2, 3, 4, 5, 6, 7]
        );
        let mut c = Counters {
            shown: Shown::Compute,
            values: [0, 0, 0, 0, 0, 0, 42],
            partial: false,
            measured: true,
        };
        assert_eq!(c.shown().collect::<Vec<_>>(), [("compute_invocations", 42)]);
        c.partial = true;
        assert_eq!(
            c.shown().collect::<Vec<_>>(),
            [("compute_invocations", 42), ("partial", 1)]
        );
        c.measured = false;
        assert_eq!(c.shown().collect::<Vec<_>>(), [("partial", 1)]);
    }

    fn range(event: u32, first: u32, count: u32, shown: Shown, partial: bool) -> StatsRange {
        StatsRange {
            event,
            first,
            count,
            shown,
            partial,
        }
    }

    #[test]
    fn a_range_the_application_overlapped_is_partial_even_without_values() {
        let mut s = StatsRecording::new(GRAPHICS);
        s.partial = true;
        s.close(Some(3), Shown::Graphics);
        s.ended(Query { pool: 0, query: 0 });
        s.close(Some(6), Shown::Compute);
        let r = s.freeze(Some(7));
        assert_eq!(
            r.ranges,
            [
                range(3, 0, 0, Shown::Graphics, true),
                range(6, 0, 1, Shown::Compute, false),
                range(7, 0, 1, Shown::All, true),
            ]
        );
    }
}
