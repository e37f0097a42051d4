//! The application's `vkCmdBeginQuery`/`vkCmdEndQuery`: their `query` tracepoints, and,
//! while GPU counters are on, the application's own pipeline statistics queries, which
//! the layer's must not overlap (see `record::command_trace::counted`). Hooked whatever
//! the `query` switch says, so that the layer always sees them. A query of the
//! application's own VK_KHR_performance_query counters of command-buffer scope must be its
//! command buffer's first command and its last: the layer writes nothing before its begin
//! (not traced) and ends the command buffer's range before its end.

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
    if tracer.objects.is_command_buffer_scope_pool(pool) {
        // The command buffer's first command: nothing of the layer's goes before it.
        return call();
    }
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
    if tracer.objects.is_command_buffer_scope_pool(pool) {
        // The command buffer's last command: its range ends before it.
        tracer.guarded("vkCmdEndQuery", || tracer.end(cb));
        return call();
    }
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
