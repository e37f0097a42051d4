//! `UTRACE_INHERITED_QUERIES=1` without `UTRACE_PERF_QUERY`: the rule a validation layer
//! older than the one Debian 12 ships does not check, checked here beneath it and any
//! breach said on stderr (`utrace-inherited: VUID-...`): a secondary executed while a
//! pipeline statistics query is active must have been begun with inheritance
//! `pipelineStatistics` holding every statistic of the query's pool
//! (VUID-vkCmdExecuteCommands-commandBuffer-00104; Debian's validation checks the subset
//! the wrong way round). Takes vkCreateQueryPool and vkBeginCommandBuffer from the fault
//! hooks while on.

use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::LazyLock;

use ash::vk;
use ash::vk::Handle;
use parking_lot::Mutex;

use crate::loader::next_device_fn;
use crate::perf_pools::down;

#[derive(Default)]
struct State {
    /// Statistics pools and their statistics.
    pools: HashMap<u64, vk::QueryPipelineStatisticFlags>,
    /// Each command buffer's inherited statistics, as last begun.
    inherits: HashMap<u64, vk::QueryPipelineStatisticFlags>,
    /// Each command buffer's active statistics query's statistics.
    active: HashMap<u64, vk::QueryPipelineStatisticFlags>,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(Default::default);

/// Whether these checks are on.
pub fn enabled() -> bool {
    crate::perf_inherited::enabled() && !crate::perf_query::enabled()
}

unsafe extern "system" fn create_query_pool(
    device: vk::Device,
    info: *const vk::QueryPoolCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::QueryPool,
) -> vk::Result {
    let r = down!(
        device,
        c"vkCreateQueryPool",
        vk::PFN_vkCreateQueryPool,
        (device, info, alloc, out),
        vk::Result::ERROR_DEVICE_LOST
    );
    // SAFETY: the caller's valid info, and its output (written on success).
    unsafe {
        if r == vk::Result::SUCCESS && (*info).query_type == vk::QueryType::PIPELINE_STATISTICS {
            let flags = (*info).pipeline_statistics;
            STATE.lock().pools.insert((*out).as_raw(), flags);
        }
    }
    r
}

unsafe extern "system" fn begin_command_buffer(
    cb: vk::CommandBuffer,
    info: *const vk::CommandBufferBeginInfo<'_>,
) -> vk::Result {
    // SAFETY: the caller's valid begin info and inheritance info.
    let inherits = unsafe { (*info).p_inheritance_info.as_ref() }
        .map_or(vk::QueryPipelineStatisticFlags::empty(), |i| {
            i.pipeline_statistics
        });
    {
        let mut state = STATE.lock();
        state.inherits.insert(cb.as_raw(), inherits);
        state.active.remove(&cb.as_raw());
    }
    down!(
        cb,
        c"vkBeginCommandBuffer",
        vk::PFN_vkBeginCommandBuffer,
        (cb, info),
        vk::Result::ERROR_DEVICE_LOST
    )
}

unsafe extern "system" fn cmd_begin_query(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    query: u32,
    flags: vk::QueryControlFlags,
) {
    {
        let mut state = STATE.lock();
        if let Some(&statistics) = state.pools.get(&pool.as_raw()) {
            state.active.insert(cb.as_raw(), statistics);
        }
    }
    down!(
        cb,
        c"vkCmdBeginQuery",
        vk::PFN_vkCmdBeginQuery,
        (cb, pool, query, flags),
        ()
    )
}

unsafe extern "system" fn cmd_end_query(cb: vk::CommandBuffer, pool: vk::QueryPool, query: u32) {
    {
        let mut state = STATE.lock();
        if state.pools.contains_key(&pool.as_raw()) {
            state.active.remove(&cb.as_raw());
        }
    }
    down!(
        cb,
        c"vkCmdEndQuery",
        vk::PFN_vkCmdEndQuery,
        (cb, pool, query),
        ()
    )
}

unsafe extern "system" fn cmd_execute_commands(
    cb: vk::CommandBuffer,
    count: u32,
    secondaries: *const vk::CommandBuffer,
) {
    let list = if secondaries.is_null() || count == 0 {
        &[][..]
    } else {
        // SAFETY: the caller's array of `count` command buffers.
        unsafe { std::slice::from_raw_parts(secondaries, count as usize) }
    };
    {
        let state = STATE.lock();
        if let Some(&needed) = state.active.get(&cb.as_raw()) {
            for s in list {
                let inherits = state.inherits.get(&s.as_raw()).copied().unwrap_or_default();
                if !inherits.contains(needed) {
                    eprintln!("utrace-inherited: VUID-vkCmdExecuteCommands-commandBuffer-00104: secondary {s:?} inherits statistics {inherits:?}, the active query counts {needed:?}");
                }
            }
        }
    }
    down!(
        cb,
        c"vkCmdExecuteCommands",
        vk::PFN_vkCmdExecuteCommands,
        (cb, count, secondaries),
        ()
    )
}

/// The checks' hook for device command `name`.
pub fn lookup(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkCreateQueryPool" => hook!(create_query_pool),
        b"vkBeginCommandBuffer" => hook!(begin_command_buffer),
        b"vkCmdBeginQuery" => hook!(cmd_begin_query),
        b"vkCmdEndQuery" => hook!(cmd_end_query),
        b"vkCmdExecuteCommands" => hook!(cmd_execute_commands),
        _ => None,
    }
}
