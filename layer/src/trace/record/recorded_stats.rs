//! A frozen recording's pipeline statistics (`GPU_TRACE_COUNTERS=pipeline`): its queries,
//! the ranges that sum them, and where a run's values are found.

use ash::vk;

use super::counter_values::{Counters, Query, StatsRange, COMPUTE_AT, STATISTICS};
use crate::gpu::interface::Backend;
use crate::gpu::statistics_queries::{COMPUTE, POOL_QUERIES};

/// Where a run's statistics are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// In the queries (a one-time recording: its one run is read once it completed).
    Pool,
    /// In each run's values, this many after its timestamps: a tracked recording's run
    /// slot holds them (see `gpu::run_slots`), read with the run.
    Run(u32),
    /// In each run's values, this many: a recording the layer does not track (for
    /// simultaneous use, or executing secondaries, or of many timestamps) goes wrapped at
    /// every run, and the layer's copy after it copies them into the batch's readback
    /// after all the batch's timestamps (see `submit::segment_lists`).
    Copied(u32),
    /// Nowhere: a tracked reusable recording whose slot has no room. Its ranges get none
    /// (its queries are still reset by each run).
    Unread,
}

/// A frozen recording's statistics: read once its run completed.
pub struct RecordedStats {
    pub statistics: vk::QueryPipelineStatisticFlags,
    pub pools: Vec<vk::QueryPool>,
    pub(super) used_in_last: u32,
    pub queries: Vec<Query>,
    pub ranges: Vec<StatsRange>,
    pub source: Source,
}

impl RecordedStats {
    /// The indices of the trace's events that end a range with statistics, in order.
    pub fn range_events(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().map(|r| r.event)
    }

    /// The values each run writes after its timestamps ([`Source::Run`]), else 0.
    pub fn in_run(&self) -> u32 {
        match self.source {
            Source::Run(n) => n,
            _ => 0,
        }
    }

    /// What the layer's copy after a wrapped run copies of a reusable recording's
    /// statistics (its one pool's queries): the pool, the queries, the values a query
    /// writes. A tracked run that goes wrapped is copied too (its run slot is not read
    /// then).
    pub fn copied(&self) -> Option<(vk::QueryPool, u32, u32)> {
        let n = match self.source {
            Source::Run(n) | Source::Copied(n) => n,
            Source::Pool | Source::Unread => return None,
        };
        let per_query = self.statistics.as_raw().count_ones();
        let pool = *self.pools.first()?;
        (n > 0 && per_query > 0).then_some((pool, n / per_query, per_query))
    }

    /// Each range's counters from one run's values (`run`: its first pool's queries,
    /// [`Source::Run`]).
    pub fn from_run(&self, run: &[u64]) -> Vec<Counters> {
        let per_query = self.statistics.as_raw().count_ones() as usize;
        let values: Vec<[u64; STATISTICS]> = run
            .chunks_exact(per_query.max(1))
            .map(|q| in_order(self.statistics, q))
            .collect();
        self.sums(&values)
    }

    /// Each range's counters, read from the queries (after the run completed); `None` for
    /// all when a read failed.
    pub fn read(&self, backend: &Backend) -> Option<Vec<Counters>> {
        if self.ranges.is_empty() {
            // Nothing counted (its first pool was taken at the begin, unused).
            return Some(Vec::new());
        }
        let per_query = self.statistics.as_raw().count_ones();
        let mut values: Vec<[u64; STATISTICS]> = Vec::new();
        let mut raw = vec![0u64; (POOL_QUERIES * per_query) as usize];
        for (i, &pool) in self.pools.iter().enumerate() {
            let count = if i + 1 == self.pools.len() {
                self.used_in_last
            } else {
                POOL_QUERIES
            };
            if count == 0 {
                continue;
            }
            let out = &mut raw[..(count * per_query) as usize];
            backend.read_statistics(pool, count, per_query, out).ok()?;
            for q in out.chunks_exact(per_query as usize) {
                values.push(in_order(self.statistics, q));
            }
        }
        Some(self.sums(&values))
    }

    /// Each range's sum of `values` (one per query, in the recording's order of pools).
    fn sums(&self, values: &[[u64; STATISTICS]]) -> Vec<Counters> {
        let index = |q: &Query| q.pool as usize * POOL_QUERIES as usize + q.query as usize;
        self.ranges
            .iter()
            .map(|r| {
                let mut sum = [0u64; STATISTICS];
                for q in &self.queries[r.first as usize..(r.first + r.count) as usize] {
                    let v = values.get(index(q)).unwrap_or(&[0; STATISTICS]);
                    for (s, v) in sum.iter_mut().zip(v) {
                        *s += v;
                    }
                }
                Counters {
                    shown: r.shown,
                    values: sum,
                    partial: r.partial,
                    measured: r.count > 0,
                    mesh: self
                        .statistics
                        .contains(vk::QueryPipelineStatisticFlags::MESH_SHADER_INVOCATIONS_EXT),
                    hardware: None,
                }
            })
            .collect()
    }
}

/// A query's values in the order of [`Counters::NAMES`] (a compute-only pool writes the
/// compute statistic alone).
fn in_order(statistics: vk::QueryPipelineStatisticFlags, written: &[u64]) -> [u64; STATISTICS] {
    let mut out = [0u64; STATISTICS];
    if statistics == COMPUTE {
        out[COMPUTE_AT] = written.first().copied().unwrap_or(0);
    } else {
        for (o, v) in out.iter_mut().zip(written) {
            *o = *v;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::statistics_queries::GRAPHICS;
    use crate::trace::record::statistics::{Shown, StatsRecording};

    #[test]
    fn a_compute_pool_writes_its_one_statistic_in_its_place() {
        assert_eq!(in_order(COMPUTE, &[42]), [0, 0, 0, 0, 0, 0, 42, 0, 0]);
        assert_eq!(
            in_order(GRAPHICS, &[1, 2, 3, 4, 5, 6, 7]),
            [1, 2, 3, 4, 5, 6, 7, 0, 0]
        );
        // With the mesh shading statistics: after the compute one, as Vulkan writes them.
        let mesh = GRAPHICS
            | vk::QueryPipelineStatisticFlags::TASK_SHADER_INVOCATIONS_EXT
            | vk::QueryPipelineStatisticFlags::MESH_SHADER_INVOCATIONS_EXT;
        assert_eq!(
            in_order(mesh, &[1, 2, 3, 4, 5, 6, 7, 8, 9]),
            [1, 2, 3, 4, 5, 6, 7, 8, 9]
        );
    }

    #[test]
    fn a_runs_values_sum_into_its_ranges() {
        let mut s = StatsRecording::new(COMPUTE, true);
        let q = |i| Query { pool: 0, query: i };
        s.ended(q(0));
        s.close(Some(2), Shown::Compute);
        s.ended(q(1));
        s.close(Some(5), Shown::Compute);
        let r = s.freeze(Some(6), Source::Run(2));
        let sums: Vec<u64> = r.from_run(&[64, 960]).iter().map(|c| c.values[6]).collect();
        assert_eq!(sums, [64, 960, 1024]);
        // Unread: no range gets any.
        let mut s = StatsRecording::new(COMPUTE, true);
        s.ended(q(0));
        s.close(Some(2), Shown::Compute);
        assert!(s.freeze(Some(3), Source::Unread).ranges.is_empty());
    }
}
