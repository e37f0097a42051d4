//! Pipeline statistics queries (`GPU_TRACE_COUNTERS=pipeline`): their pools, the commands
//! that begin and end one, and the host's read of their values. A pool's statistics are
//! fixed when it is made and must suit the queue family that uses it: a family with
//! graphics gets the graphics statistics and the compute one (and task and mesh shader
//! invocations where the device counts them), a compute-only family the compute one, a
//! transfer-only family none.

use ash::vk;

use super::backend::Backend;
use super::check;
use super::layer_commands::barrier;
use super::query_pool;
use super::run_slots::RunSlot;
use crate::loader::dispatch::DeviceDispatch;

/// Queries of each statistics pool.
pub const POOL_QUERIES: u32 = 64;

impl Backend {
    /// Whether pipeline statistics queries may be made.
    pub(super) fn statistics_on(&self) -> bool {
        self.statistics
    }

    /// Whether they count task and mesh shader invocations too (see `mesh_statistics`).
    pub(super) fn mesh_statistics_on(&self) -> bool {
        self.mesh_statistics
    }

    /// Whether a statistics query may be active across `vkCmdExecuteCommands`
    /// (`inheritedQueries` enabled): secondaries then count inside the primary's ranges.
    pub fn statistics_across_secondaries(&self) -> bool {
        self.statistics && self.inherited_statistics
    }
    /// The statistics command buffers of `family` get, if any (none unless GPU counters
    /// are on and the device has them).
    pub fn statistics_for(&self, family: u32) -> Option<vk::QueryPipelineStatisticFlags> {
        if !self.statistics_on() {
            return None;
        }
        let statistics = for_family(self.caps().families.get(family as usize)?.flags)?;
        if statistics == GRAPHICS && self.mesh_statistics_on() {
            Some(statistics | super::mesh_statistics::MESH)
        } else {
            Some(statistics)
        }
    }

    /// A pool of [`POOL_QUERIES`] queries of `statistics`, reset.
    pub fn create_statistics_pool(
        &self,
        statistics: vk::QueryPipelineStatisticFlags,
    ) -> Result<vk::QueryPool, vk::Result> {
        let pool = create(self.dispatch(), statistics, POOL_QUERIES)?;
        // SAFETY: a new pool of that many queries (statistics need host reset, see
        // `statistics_on`).
        unsafe { self.reset_queries(pool, POOL_QUERIES) };
        Ok(pool)
    }

    /// Begins a statistics query in `cmd`.
    ///
    /// # Safety
    /// As [`query_pool::begin`].
    pub unsafe fn begin_statistics(&self, cmd: vk::CommandBuffer, pool: vk::QueryPool, query: u32) {
        // SAFETY: the caller's promise.
        unsafe { query_pool::begin(self.dispatch(), cmd, pool, query) };
    }

    /// Ends the statistics query active in `cmd`.
    ///
    /// # Safety
    /// As [`query_pool::end`].
    pub unsafe fn end_statistics(&self, cmd: vk::CommandBuffer, pool: vk::QueryPool, query: u32) {
        // SAFETY: the caller's promise.
        unsafe { query_pool::end(self.dispatch(), cmd, pool, query) };
    }

    /// Records into `cmd` (recording, outside any render pass, before any of the pool's
    /// queries) the reset of `pool`, so that every run of `cmd` finds them reset.
    ///
    /// # Safety
    /// As said; `pool` is the recording's own.
    pub unsafe fn reset_statistics(&self, cmd: vk::CommandBuffer, pool: vk::QueryPool) {
        // SAFETY: the caller's promise.
        unsafe { (self.dispatch().fp_v1_0.cmd_reset_query_pool)(cmd, pool, 0, POOL_QUERIES) };
    }

    /// Records at the end of `cmd` (outside any render pass, after its last statistics
    /// query ended) the copy of queries `0..count` of `pool` into `slot`, `after` values
    /// from its start (after the run's timestamps), made visible to the host.
    ///
    /// # Safety
    /// As said; the slot holds `after + count * per_query` values.
    pub unsafe fn record_statistics_copy(
        &self,
        cmd: vk::CommandBuffer,
        (pool, count, per_query): (vk::QueryPool, u32, u32),
        slot: RunSlot,
        after: u32,
    ) {
        let d = self.dispatch();
        let after_last_copy = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
        barrier(
            d,
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            Some(after_last_copy),
        );
        // SAFETY: the caller's promise: `cmd` is recording outside a render pass and the
        // slot has room.
        unsafe {
            (d.fp_v1_0.cmd_copy_query_pool_results)(
                cmd,
                pool,
                0,
                count,
                slot.buffer,
                slot.offset + u64::from(after) * 8,
                u64::from(per_query) * 8,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        };
        let to_host = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ);
        barrier(d, cmd, vk::PipelineStageFlags::HOST, Some(to_host));
    }

    /// Reads the first `count` queries of a statistics pool (see [`query_pool::read_results`]).
    pub fn read_statistics(
        &self,
        pool: vk::QueryPool,
        count: u32,
        per_query: u32,
        out: &mut [u64],
    ) -> Result<(), vk::Result> {
        query_pool::read_results(
            self.dispatch(),
            (pool, count, per_query),
            vk::QueryResultFlags::TYPE_64,
            out,
        )
    }
}

/// The statistics a family with graphics gets, in the order Vulkan writes them (by bit).
pub const GRAPHICS: vk::QueryPipelineStatisticFlags = vk::QueryPipelineStatisticFlags::from_raw(
    vk::QueryPipelineStatisticFlags::INPUT_ASSEMBLY_VERTICES.as_raw()
        | vk::QueryPipelineStatisticFlags::INPUT_ASSEMBLY_PRIMITIVES.as_raw()
        | vk::QueryPipelineStatisticFlags::VERTEX_SHADER_INVOCATIONS.as_raw()
        | vk::QueryPipelineStatisticFlags::CLIPPING_INVOCATIONS.as_raw()
        | vk::QueryPipelineStatisticFlags::CLIPPING_PRIMITIVES.as_raw()
        | vk::QueryPipelineStatisticFlags::FRAGMENT_SHADER_INVOCATIONS.as_raw()
        | vk::QueryPipelineStatisticFlags::COMPUTE_SHADER_INVOCATIONS.as_raw(),
);

/// What a compute-only family gets.
pub const COMPUTE: vk::QueryPipelineStatisticFlags =
    vk::QueryPipelineStatisticFlags::COMPUTE_SHADER_INVOCATIONS;

/// The statistics queries of a family with `flags`, if it may have any.
pub fn for_family(flags: vk::QueueFlags) -> Option<vk::QueryPipelineStatisticFlags> {
    if flags.contains(vk::QueueFlags::GRAPHICS) {
        Some(GRAPHICS)
    } else if flags.contains(vk::QueueFlags::COMPUTE) {
        Some(COMPUTE)
    } else {
        None
    }
}

/// A pool of `count` statistics queries of `statistics`.
pub fn create(
    d: &DeviceDispatch,
    statistics: vk::QueryPipelineStatisticFlags,
    count: u32,
) -> Result<vk::QueryPool, vk::Result> {
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::PIPELINE_STATISTICS)
        .query_count(count)
        .pipeline_statistics(statistics);
    let mut pool = vk::QueryPool::null();
    // SAFETY: valid create info on a live device with pipelineStatisticsQuery enabled; the
    // pool is destroyed at the device's teardown.
    check(unsafe { (d.fp_v1_0.create_query_pool)(d.handle, &info, std::ptr::null(), &mut pool) })?;
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_get_the_statistics_they_can_run() {
        assert_eq!(
            for_family(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE),
            Some(GRAPHICS)
        );
        assert_eq!(
            for_family(vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER),
            Some(COMPUTE)
        );
        assert_eq!(for_family(vk::QueueFlags::TRANSFER), None);
        assert_eq!(GRAPHICS.as_raw().count_ones(), 7);
    }
}
