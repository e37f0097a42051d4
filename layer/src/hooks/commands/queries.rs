//! The application's `vkCmdBeginQuery`/`vkCmdEndQuery`: their `query` tracepoints, and,
//! while GPU counters are on, the application's own pipeline statistics queries, which
//! the layer's must not overlap (see `record::command_trace::counted`). Hooked whatever
//! the `query` switch says, so that the layer always sees them.

use ash::vk;
use ash::vk::Handle;

use crate::trace::tracepoints::*;

/// # Safety
/// Vulkan's rules for `vkCmdBeginQuery`.
pub unsafe extern "system" fn cmd_begin_query(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    query: u32,
    flags: vk::QueryControlFlags,
) {
    let dev = device_or!(cb);
    let next = dev.dispatch.fp_v1_0.cmd_begin_query;
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb, pool, query, flags) };
    let Some(tracer) = dev.tracer.as_ref() else {
        return call();
    };
    // SAFETY: `cb` is the command buffer of the application's current `vkCmd*` call.
    unsafe {
        tracer.around(
            cb,
            |r, t| {
                if tracer.objects.is_statistics_pool(pool) {
                    t.application_statistics_begin(r);
                }
                trace_start_query_op(r, t, "begin", pool.as_raw(), query, 1);
            },
            call,
            trace_end_query_op,
        )
    }
}

/// # Safety
/// Vulkan's rules for `vkCmdEndQuery`.
pub unsafe extern "system" fn cmd_end_query(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    query: u32,
) {
    let dev = device_or!(cb);
    let next = dev.dispatch.fp_v1_0.cmd_end_query;
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb, pool, query) };
    let Some(tracer) = dev.tracer.as_ref() else {
        return call();
    };
    // SAFETY: `cb` is the command buffer of the application's current `vkCmd*` call.
    unsafe {
        tracer.around(
            cb,
            |r, t| trace_start_query_op(r, t, "end", pool.as_raw(), query, 1),
            call,
            |r, t| {
                trace_end_query_op(r, t);
                if tracer.objects.is_statistics_pool(pool) {
                    t.application_statistics_end(r);
                }
            },
        )
    }
}
