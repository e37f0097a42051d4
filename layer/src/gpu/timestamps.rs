//! The one Vulkan command the recording side issues: a tracepoint's timestamp, written into
//! the application's command buffer.

use ash::vk;

use crate::loader::dispatch::DeviceDispatch;

/// Writes a timestamp into query `query` of `pool`: after the work before it (an end,
/// `end_of_pipe`) or as the work after it starts.
///
/// # Safety
/// `cmd` is recording, and every batch that runs it re-arms the query first.
#[inline(always)]
pub unsafe fn cmd_write_timestamp(
    d: &DeviceDispatch,
    cmd: vk::CommandBuffer,
    end_of_pipe: bool,
    pool: vk::QueryPool,
    query: u32,
) {
    let stage = if end_of_pipe {
        vk::PipelineStageFlags::BOTTOM_OF_PIPE
    } else {
        vk::PipelineStageFlags::TOP_OF_PIPE
    };
    // SAFETY: the caller's promise; the dispatch is the command buffer's device's.
    unsafe { (d.fp_v1_0.cmd_write_timestamp)(cmd, stage, pool, query) };
}
