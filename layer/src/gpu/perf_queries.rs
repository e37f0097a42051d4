//! Hardware counter queries (`GPU_TRACE_COUNTERS=perf:NAME,...`, VK_KHR_performance_query)
//! once the device is made: which counters each queue family's pools count, the pools, and
//! the host's read of their values. A pool counts one family's chosen counters; its queries
//! are reset on the host only (a command buffer may not reset a performance query it also
//! begins), and read with `vkGetQueryPoolResults` (few drivers allow copying them).

use ash::vk;

use super::backend::Backend;
use super::check;
use super::hardware_plan::HardwarePlan;
use super::query_pool;

/// Queries of each hardware counter pool.
pub const PERF_POOL_QUERIES: u32 = 32;

impl Backend {
    /// The hardware counters the device collects, if any.
    pub fn hardware(&self) -> Option<&HardwarePlan> {
        self.hardware.as_deref()
    }

    /// A pool of [`PERF_POOL_QUERIES`] queries of the chosen counters of `family`, reset.
    pub fn create_perf_pool(&self, family: u32) -> Result<vk::QueryPool, vk::Result> {
        let counters = self
            .hardware()
            .and_then(|h| h.counters_of(family))
            .ok_or(vk::Result::ERROR_FEATURE_NOT_PRESENT)?;
        let mut perf = vk::QueryPoolPerformanceCreateInfoKHR::default()
            .queue_family_index(family)
            .counter_indices(counters);
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::PERFORMANCE_QUERY_KHR)
            .query_count(PERF_POOL_QUERIES)
            .push_next(&mut perf);
        let d = self.dispatch();
        let mut pool = vk::QueryPool::null();
        // SAFETY: a valid create info of counters the family lists, in one pass (checked
        // when the device was made, with performanceCounterQueryPools enabled); the pool is
        // destroyed at the device's teardown.
        check(unsafe {
            (d.fp_v1_0.create_query_pool)(d.handle, &info, std::ptr::null(), &mut pool)
        })?;
        // SAFETY: a new pool of that many queries; host reset is on wherever hardware
        // counters are (`Backend::new`).
        unsafe { self.reset_queries(pool, PERF_POOL_QUERIES) };
        Ok(pool)
    }

    /// Begins query `query` of a hardware counter pool in `cmd`.
    ///
    /// # Safety
    /// `cmd` is recording, of the pool's family, with no performance query active; the
    /// profiling lock is held; the query was reset. Where a counter is of command-buffer
    /// scope this is `cmd`'s first command; else it is outside any render pass instance.
    pub unsafe fn begin_perf(&self, cmd: vk::CommandBuffer, pool: vk::QueryPool, query: u32) {
        // SAFETY: the caller's promise.
        unsafe { query_pool::begin(self.dispatch(), cmd, pool, query) };
    }

    /// Ends the performance query active in `cmd`.
    ///
    /// # Safety
    /// The query is the one active in `cmd`. Where a counter is of command-buffer scope this
    /// is `cmd`'s last command; else it is outside any render pass instance.
    pub unsafe fn end_perf(&self, cmd: vk::CommandBuffer, pool: vk::QueryPool, query: u32) {
        // SAFETY: the caller's promise.
        unsafe { query_pool::end(self.dispatch(), cmd, pool, query) };
    }

    /// Reads queries `0..count` of a hardware counter pool, one
    /// `VkPerformanceCounterResultKHR` (8 bytes, kept as their bits) per counter, into
    /// `out` (`count` times the counters). `NOT_READY` when one is not available.
    pub fn read_perf(
        &self,
        pool: vk::QueryPool,
        count: u32,
        out: &mut [u64],
    ) -> Result<(), vk::Result> {
        let per_query = (out.len() / count.max(1) as usize) as u32;
        let flags = vk::QueryResultFlags::empty();
        query_pool::read_results(self.dispatch(), (pool, count, per_query), flags, out)
    }
}
