//! Pipeline statistics beside a command buffer's ranges (`GPU_TRACE_COUNTERS=pipeline`):
//! the queries a recording takes ([`StatsRecording`]), what it leaves to its frozen trace
//! ([`super::recorded_stats::RecordedStats`]), and what an output prints ([`Counters`]).
//!
//! One statistics query may be active in a command buffer at a time, so queries go on the
//! innermost level that gets them (each dispatch; each subpass of a render pass), and an
//! enclosing range (the command buffer) gets the sum of the queries inside it. A
//! recording's first pool is reset by the command buffer itself when it begins, so that
//! every run finds its queries reset; a reusable recording takes no more queries than that
//! pool holds (a one-time one takes further pools, reset on the host).

use ash::vk;
use smallvec::SmallVec;

use super::recorded_stats::{RecordedStats, Source};
use super::statistics_pools::StatsPools;
use crate::gpu::statistics_queries::{COMPUTE, POOL_QUERIES};

pub use super::counter_values::{Counters, Query, Shown, StatsRange, STATISTICS};

/// The statistics of one recording in progress.
pub struct StatsRecording {
    pub statistics: vk::QueryPipelineStatisticFlags,
    /// Only the first pool's queries (reset by every run): a reusable recording.
    single_pool: bool,
    pools: Vec<vk::QueryPool>,
    /// Queries taken from the last pool.
    used_in_last: u32,
    /// The query active in the command buffer, and the views it counts (a query begun in
    /// a multiview subpass uses as many consecutive queries as the subpass has views).
    pub active: Option<(Query, u32)>,
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
    /// The active query spans a render pass instance of secondaries: begun before it, it
    /// ends only after it (see `counted::begin_pass_statistics`).
    pub spanning: bool,
    /// The render pass instance being recorded: where its queries begin among `queries`
    /// (its subpasses' or its draws'), and whether a range inside it was partial.
    pass: Option<(u32, bool)>,
}

impl StatsRecording {
    pub fn new(statistics: vk::QueryPipelineStatisticFlags, single_pool: bool) -> StatsRecording {
        StatsRecording {
            statistics,
            single_pool,
            pools: Vec::new(),
            used_in_last: POOL_QUERIES,
            active: None,
            pending: SmallVec::new(),
            queries: Vec::new(),
            ranges: Vec::new(),
            application_active: false,
            resume_after_application: false,
            partial: false,
            spanning: false,
            pass: None,
        }
    }

    /// The next `views` consecutive queries (a new pool from `pools` when the last has no
    /// room): the first's handle and place;
    /// `None` when no pool could be had.
    pub fn take(&mut self, pools: &StatsPools, views: u32) -> Option<(vk::QueryPool, Query)> {
        if views > POOL_QUERIES {
            return None;
        }
        if self.used_in_last + views > POOL_QUERIES {
            if self.single_pool && !self.pools.is_empty() {
                return None;
            }
            self.pools.push(pools.acquire(self.statistics)?);
            self.used_in_last = 0;
        }
        let query = Query {
            pool: self.pools.len() as u32 - 1,
            query: self.used_in_last,
        };
        self.used_in_last += views;
        Some((self.pools[query.pool as usize], query))
    }

    /// The handle of `query`'s pool.
    pub fn pool_of(&self, query: Query) -> vk::QueryPool {
        self.pools[query.pool as usize]
    }

    /// The active query was ended: its values go to the next range closed.
    pub fn ended(&mut self, query: Query) {
        self.ended_views(query, 1);
    }

    /// The active query, begun in a subpass of `views` views, was ended: the values of
    /// its `views` consecutive queries go to the next range closed (their sum is the
    /// range's).
    pub fn ended_views(&mut self, query: Query, views: u32) {
        for v in 0..views {
            self.pending.push(Query {
                pool: query.pool,
                query: query.query + v,
            });
        }
    }

    /// The queries ended since the last range go to the range ending at event `event`
    /// (or nowhere, with `None`: its end event was not recorded).
    pub fn close(&mut self, event: Option<u32>, shown: Shown) {
        let partial = std::mem::take(&mut self.partial);
        if let Some((_, pass_partial)) = self.pass.as_mut() {
            *pass_partial |= partial;
        }
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

    /// A render pass instance begins: its range will sum the queries taken inside it.
    pub fn open_pass(&mut self) {
        self.pending.clear();
        self.pass = Some((self.queries.len() as u32, false));
    }

    /// The render pass instance ends at event `event` (`None`: not recorded): its range
    /// sums its subpasses' queries, or its draws' (each closed into a range of its own).
    pub fn close_pass(&mut self, event: Option<u32>) {
        let Some((first, mut partial)) = self.pass.take() else {
            self.pending.clear();
            return;
        };
        partial |= std::mem::take(&mut self.partial);
        let Some(event) = event else {
            self.pending.clear();
            return;
        };
        self.queries.extend(self.pending.drain(..));
        let count = self.queries.len() as u32 - first;
        if count == 0 && !partial {
            return;
        }
        self.ranges.push(StatsRange {
            event,
            first,
            count,
            shown: Shown::Graphics,
            partial,
        });
    }

    /// The first pool, taken at the recording's begin (the command buffer resets it).
    pub fn first_pool(&mut self, pools: &StatsPools) -> Option<vk::QueryPool> {
        let pool = pools.acquire(self.statistics)?;
        self.pools.push(pool);
        self.used_in_last = 0;
        Some(pool)
    }

    /// The first pool and how many of its queries the recording took (what a run copies
    /// into its slot).
    pub fn first(&self) -> Option<(vk::QueryPool, u32)> {
        let pool = *self.pools.first()?;
        let used = if self.pools.len() == 1 {
            self.used_in_last
        } else {
            POOL_QUERIES
        };
        Some((pool, used))
    }

    /// The values one run writes: its first pool's queries (a reusable recording has no
    /// other).
    pub fn run_values(&self) -> u32 {
        self.used_in_last * self.statistics.as_raw().count_ones()
    }

    /// The recording's end: the command buffer's own range (event `event`) sums every
    /// query. Frozen into what the trace keeps, its runs' values found at `source`.
    pub fn freeze(mut self, event: Option<u32>, source: Source) -> RecordedStats {
        self.pending.clear();
        let partial = self.ranges.iter().any(|r| r.partial);
        if let (Some(event), true) = (event, !self.queries.is_empty() || partial) {
            let shown = if self.statistics == COMPUTE {
                Shown::ComputeSum
            } else {
                Shown::All
            };
            self.ranges.push(StatsRange {
                event,
                first: 0,
                count: self.queries.len() as u32,
                shown,
                partial,
            });
        }
        if source == Source::Unread {
            self.ranges.clear();
        }
        RecordedStats {
            statistics: self.statistics,
            pools: self.pools,
            used_in_last: self.used_in_last,
            queries: self.queries,
            ranges: self.ranges,
            source,
        }
    }

    /// The pools of a recording that was never frozen (reset, or freed), for
    /// [`StatsPools::release`].
    pub fn into_pools(self) -> Vec<vk::QueryPool> {
        self.pools
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::statistics_queries::GRAPHICS;

    #[test]
    fn ranges_sum_their_queries_and_the_command_buffer_sums_all() {
        let mut s = StatsRecording::new(GRAPHICS, false);
        // Two queries (a render pass of two subpasses), one range; then one more.
        let q = |i| Query { pool: 0, query: i };
        s.ended(q(0));
        s.ended(q(1));
        s.close(Some(5), Shown::Graphics);
        s.ended(q(2));
        s.close(None, Shown::Compute);
        s.ended(q(3));
        s.close(Some(9), Shown::Compute);
        let r = s.freeze(Some(10), Source::Pool);
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
    fn on_a_family_without_graphics_the_command_buffer_sums_the_compute_statistic_only() {
        let mut s = StatsRecording::new(COMPUTE, false);
        s.ended(Query { pool: 0, query: 0 });
        s.close(Some(2), Shown::Compute);
        let r = s.freeze(Some(3), Source::Pool);
        assert_eq!(
            r.ranges,
            [
                range(2, 0, 1, Shown::Compute, false),
                range(3, 0, 1, Shown::ComputeSum, false),
            ]
        );
        let sum = Counters {
            shown: Shown::ComputeSum,
            values: [0, 0, 0, 0, 0, 0, 960, 0, 0],
            partial: false,
            measured: true,
            mesh: false,
            hardware: None,
        };
        assert!(sum.is_sum());
        assert_eq!(counts(&sum), [("compute_invocations", 960)]);
    }

    #[test]
    fn a_range_shows_its_statistics_then_partial() {
        let mut c = Counters {
            shown: Shown::Compute,
            values: [0, 0, 0, 0, 0, 0, 42, 0, 0],
            partial: false,
            measured: true,
            mesh: false,
            hardware: None,
        };
        assert_eq!(counts(&c), [("compute_invocations", 42)]);
        c.partial = true;
        assert_eq!(counts(&c), [("compute_invocations", 42), ("partial", 1)]);
        c.measured = false;
        assert_eq!(counts(&c), [("partial", 1)]);
    }

    fn counts(c: &Counters) -> Vec<(&'static str, u64)> {
        c.shown().map(|(n, v)| (n, v.count().unwrap())).collect()
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
    fn a_render_pass_sums_its_draws_or_its_subpasses() {
        let q = |i| Query { pool: 0, query: i };
        // Per draw: two draws (one partial), each a range; the pass sums both.
        let mut s = StatsRecording::new(GRAPHICS, false);
        s.open_pass();
        s.ended(q(0));
        s.close(Some(3), Shown::Graphics);
        s.partial = true;
        s.ended(q(1));
        s.close(Some(5), Shown::Graphics);
        s.close_pass(Some(6));
        // Per subpass: two subpass queries, no draw ranges.
        s.open_pass();
        s.ended(q(2));
        s.ended(q(3));
        s.close_pass(Some(9));
        let r = s.freeze(Some(10), Source::Pool);
        assert_eq!(
            r.ranges,
            [
                range(3, 0, 1, Shown::Graphics, false),
                range(5, 1, 1, Shown::Graphics, true),
                range(6, 0, 2, Shown::Graphics, true),
                range(9, 2, 2, Shown::Graphics, false),
                range(10, 0, 4, Shown::All, true),
            ]
        );
    }

    #[test]
    fn a_range_the_application_overlapped_is_partial_even_without_values() {
        let mut s = StatsRecording::new(GRAPHICS, false);
        s.partial = true;
        s.close(Some(3), Shown::Graphics);
        s.ended(Query { pool: 0, query: 0 });
        s.close(Some(6), Shown::Compute);
        let r = s.freeze(Some(7), Source::Pool);
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
