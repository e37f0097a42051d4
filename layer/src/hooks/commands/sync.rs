//! Pipeline barriers and the application's own query commands (both off by default; on
//! with `GPU_TRACEPOINTS=+barrier,+query`).

use ash::vk;
use ash::vk::Handle;

use super::bracketed;
use crate::hooks::slice;
use crate::trace::tracepoints::*;

bracketed! {
    /// `vkCmdPipelineBarrier`.
    cmd_pipeline_barrier(
        cb,
        src: vk::PipelineStageFlags,
        dst: vk::PipelineStageFlags,
        flags: vk::DependencyFlags,
        memory_count: u32,
        p_memory: *const vk::MemoryBarrier<'_>,
        buffer_count: u32,
        p_buffer: *const vk::BufferMemoryBarrier<'_>,
        image_count: u32,
        p_image: *const vk::ImageMemoryBarrier<'_>,
    ) = core cmd_pipeline_barrier;
    switch toggle::BARRIER;
    before |r, t| trace_start_barrier(
        r,
        t,
        vk::PipelineStageFlags2::from_raw(u64::from(src.as_raw())),
        vk::PipelineStageFlags2::from_raw(u64::from(dst.as_raw())),
        flags,
        memory_count,
        buffer_count,
        image_count,
    );
    after |r, t| trace_end_barrier(r, t);
}

bracketed! {
    /// `vkCmdPipelineBarrier2` (and KHR): the stages are the union over its barriers.
    cmd_pipeline_barrier2(cb, p_info: *const vk::DependencyInfo<'_>) = ext cmd_pipeline_barrier2;
    switch toggle::BARRIER;
    before |r, t| {
        // SAFETY: a valid dependency info and its arrays.
        let (info, memory, buffers, images) = unsafe {
            let info = &*p_info;
            (
                info,
                slice(info.p_memory_barriers, info.memory_barrier_count),
                slice(info.p_buffer_memory_barriers, info.buffer_memory_barrier_count),
                slice(info.p_image_memory_barriers, info.image_memory_barrier_count),
            )
        };
        let mut src = vk::PipelineStageFlags2::empty();
        let mut dst = vk::PipelineStageFlags2::empty();
        for (s, d) in memory.iter().map(|b| (b.src_stage_mask, b.dst_stage_mask))
            .chain(buffers.iter().map(|b| (b.src_stage_mask, b.dst_stage_mask)))
            .chain(images.iter().map(|b| (b.src_stage_mask, b.dst_stage_mask)))
        {
            src |= s;
            dst |= d;
        }
        trace_start_barrier(
            r,
            t,
            src,
            dst,
            info.dependency_flags,
            info.memory_barrier_count,
            info.buffer_memory_barrier_count,
            info.image_memory_barrier_count,
        )
    };
    after |r, t| trace_end_barrier(r, t);
}

bracketed! {
    /// `vkCmdResetQueryPool` of the application.
    cmd_reset_query_pool(cb, pool: vk::QueryPool, first: u32, count: u32) = core cmd_reset_query_pool;
    switch toggle::QUERY;
    before |r, t| trace_start_query_op(r, t, "reset", pool.as_raw(), first, count);
    after |r, t| trace_end_query_op(r, t);
}

bracketed! {
    /// `vkCmdCopyQueryPoolResults` of the application.
    cmd_copy_query_pool_results(
        cb,
        pool: vk::QueryPool,
        first: u32,
        count: u32,
        dst: vk::Buffer,
        offset: u64,
        stride: u64,
        flags: vk::QueryResultFlags,
    ) = core cmd_copy_query_pool_results;
    switch toggle::QUERY;
    before |r, t| trace_start_query_op(r, t, "copy_results", pool.as_raw(), first, count);
    after |r, t| trace_end_query_op(r, t);
}

bracketed! {
    /// `vkCmdWriteTimestamp` of the application.
    cmd_write_timestamp(cb, stage: vk::PipelineStageFlags, pool: vk::QueryPool, query: u32) = core cmd_write_timestamp;
    switch toggle::QUERY;
    before |r, t| trace_start_query_op(r, t, "write_timestamp", pool.as_raw(), query, 1);
    after |r, t| trace_end_query_op(r, t);
}

bracketed! {
    /// `vkCmdWriteTimestamp2` (and KHR) of the application.
    cmd_write_timestamp2(cb, stage: vk::PipelineStageFlags2, pool: vk::QueryPool, query: u32) = ext cmd_write_timestamp2;
    switch toggle::QUERY;
    before |r, t| trace_start_query_op(r, t, "write_timestamp", pool.as_raw(), query, 1);
    after |r, t| trace_end_query_op(r, t);
}
