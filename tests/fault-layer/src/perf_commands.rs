//! `UTRACE_PERF_QUERY=1`: the commands the performance query emulation sees pass (see
//! `perf_pools`): draws and dispatches counted into the query open in their command
//! buffer (a secondary's when a primary executes it), and every command counted as one, so
//! that a query of command-buffer scope can be checked first and last.

use ash::vk;

use crate::loader::next_device_fn;
use crate::perf_pools::{command, down};

/// Draws and dispatches: counted into the open query, then passed down.
pub(crate) unsafe extern "system" fn cmd_draw(
    cb: vk::CommandBuffer,
    vertices: u32,
    instances: u32,
    first_vertex: u32,
    first_instance: u32,
) {
    command(cb, |c| {
        c.draws += 1;
        c.vertices += u64::from(vertices) * u64::from(instances);
    });
    down!(
        cb,
        c"vkCmdDraw",
        vk::PFN_vkCmdDraw,
        (cb, vertices, instances, first_vertex, first_instance),
        ()
    )
}

pub(crate) unsafe extern "system" fn cmd_draw_indexed(
    cb: vk::CommandBuffer,
    indices: u32,
    instances: u32,
    first: u32,
    offset: i32,
    first_instance: u32,
) {
    command(cb, |c| {
        c.draws += 1;
        c.vertices += u64::from(indices) * u64::from(instances);
    });
    down!(
        cb,
        c"vkCmdDrawIndexed",
        vk::PFN_vkCmdDrawIndexed,
        (cb, indices, instances, first, offset, first_instance),
        ()
    )
}

pub(crate) unsafe extern "system" fn cmd_dispatch(cb: vk::CommandBuffer, x: u32, y: u32, z: u32) {
    command(cb, |c| {
        c.workgroups += u64::from(x) * u64::from(y) * u64::from(z)
    });
    down!(
        cb,
        c"vkCmdDispatch",
        vk::PFN_vkCmdDispatch,
        (cb, x, y, z),
        ()
    )
}

/// The other commands utrace or the application record, counted as commands only.
pub(crate) unsafe extern "system" fn cmd_write_timestamp(
    cb: vk::CommandBuffer,
    stage: vk::PipelineStageFlags,
    pool: vk::QueryPool,
    query: u32,
) {
    command(cb, |_| {});
    down!(
        cb,
        c"vkCmdWriteTimestamp",
        vk::PFN_vkCmdWriteTimestamp,
        (cb, stage, pool, query),
        ()
    )
}

pub(crate) unsafe extern "system" fn cmd_write_timestamp2(
    cb: vk::CommandBuffer,
    stage: vk::PipelineStageFlags2,
    pool: vk::QueryPool,
    query: u32,
) {
    command(cb, |_| {});
    down!(
        cb,
        c"vkCmdWriteTimestamp2",
        vk::PFN_vkCmdWriteTimestamp2,
        (cb, stage, pool, query),
        ()
    )
}

pub(crate) unsafe extern "system" fn cmd_begin_render_pass(
    cb: vk::CommandBuffer,
    info: *const vk::RenderPassBeginInfo<'_>,
    contents: vk::SubpassContents,
) {
    command(cb, |_| {});
    down!(
        cb,
        c"vkCmdBeginRenderPass",
        vk::PFN_vkCmdBeginRenderPass,
        (cb, info, contents),
        ()
    )
}

pub(crate) unsafe extern "system" fn cmd_end_render_pass(cb: vk::CommandBuffer) {
    command(cb, |_| {});
    down!(
        cb,
        c"vkCmdEndRenderPass",
        vk::PFN_vkCmdEndRenderPass,
        (cb),
        ()
    )
}

pub(crate) unsafe extern "system" fn cmd_reset_query_pool(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    first: u32,
    count: u32,
) {
    command(cb, |_| {});
    down!(
        cb,
        c"vkCmdResetQueryPool",
        vk::PFN_vkCmdResetQueryPool,
        (cb, pool, first, count),
        ()
    )
}

/// Secondaries executed: what each counted goes into the primary's open query (a driver's
/// query counts the work of the secondaries run inside it).
pub(crate) unsafe extern "system" fn cmd_execute_commands(
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
    let mut executed = crate::perf_pools::Counted::default();
    {
        let recordings = crate::perf_pools::RECORDINGS.lock();
        for s in list {
            if let Some(r) = recordings.get(&ash::vk::Handle::as_raw(*s)) {
                executed.add(&r.total);
            }
        }
    }
    command(cb, |c| c.add(&executed));
    down!(
        cb,
        c"vkCmdExecuteCommands",
        vk::PFN_vkCmdExecuteCommands,
        (cb, count, secondaries),
        ()
    )
}
