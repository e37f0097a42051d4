//! Queue hooks: submissions become batches (u_trace_flush) and presents end frames.
//! `vkQueueWaitIdle` is not intercepted: the application's wait is for the GPU, never for
//! the layer's writing.

use ash::vk;

use super::{guarded, slice};
use crate::gpu::{cpu_clock, submit};
use crate::trace::batch::SubmitTiming;

/// The shared path of every submit hook (u_trace_flush): counts the submission, turns the
/// submitted command buffers' traces into a batch and submits the application's batches
/// either as they are (`plain`) or between the layer's own (`wrapped`).
fn traced_submit(
    tracer: &crate::trace::DeviceTracer,
    what: &str,
    queue: vk::Queue,
    cmdbufs: impl Iterator<Item = vk::CommandBuffer>,
    can_split: bool,
    plain: impl FnOnce() -> vk::Result,
    wrapped: impl FnOnce(&submit::Wrapping<'_>) -> vk::Result,
) -> vk::Result {
    let submission = tracer.next_submission();
    let Some(prepared) = guarded(what, || tracer.prepare(queue, cmdbufs, can_split)).flatten()
    else {
        return plain();
    };
    // The CPU side of the submission (Perfetto's vk_queue_submit): two vDSO clock reads.
    let start_ns = cpu_clock::boottime_ns();
    let result = wrapped(&prepared.wrapping());
    let timing = SubmitTiming {
        start_ns,
        duration_ns: cpu_clock::boottime_ns().saturating_sub(start_ns),
        tid: cpu_clock::tid(),
    };
    guarded(what, || tracer.commit(prepared, result, submission, timing));
    result
}

/// # Safety
/// Vulkan's rules for `vkQueueSubmit`.
pub unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    submit_count: u32,
    p_submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    let dev = device_or!(queue, vk::Result::ERROR_DEVICE_LOST);
    let next = dev.dispatch.fp_v1_0.queue_submit;
    // SAFETY: forwarded with the application's arguments.
    let plain = || unsafe { next(queue, submit_count, p_submits, fence) };
    let Some(tracer) = dev.tracer.as_ref() else {
        return plain();
    };
    if tracer.submission_untraced() {
        return plain();
    }
    // SAFETY: the application's array of `submit_count` batches.
    let submits = unsafe { slice(p_submits, submit_count) };
    let cmdbufs = submits.iter().flat_map(|s| {
        // SAFETY: each batch holds `command_buffer_count` command buffers.
        unsafe { slice(s.p_command_buffers, s.command_buffer_count) }
            .iter()
            .copied()
    });
    let can_split = submit::splittable(submits);
    traced_submit(
        tracer,
        "vkQueueSubmit",
        queue,
        cmdbufs,
        can_split,
        plain,
        |wrap| {
            // SAFETY: the application's batches, untouched, between the layer's own.
            unsafe { submit::queue_submit(&dev.dispatch, queue, submits, fence, wrap) }
        },
    )
}

/// # Safety
/// Vulkan's rules for `vkQueueSubmit2`.
pub unsafe extern "system" fn queue_submit2(
    queue: vk::Queue,
    submit_count: u32,
    p_submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    let dev = device_or!(queue, vk::Result::ERROR_DEVICE_LOST);
    // The hook is only handed out when the next layer has the command.
    let Some(next) = dev.dispatch.queue_submit2 else {
        return vk::Result::ERROR_FEATURE_NOT_PRESENT;
    };
    // SAFETY: forwarded with the application's arguments.
    let plain = || unsafe { next(queue, submit_count, p_submits, fence) };
    let Some(tracer) = dev.tracer.as_ref() else {
        return plain();
    };
    if tracer.submission_untraced() {
        return plain();
    }
    // SAFETY: the application's array of `submit_count` batches.
    let submits = unsafe { slice(p_submits, submit_count) };
    let cmdbufs = submits.iter().flat_map(|s| {
        // SAFETY: each batch holds `command_buffer_info_count` infos.
        unsafe { slice(s.p_command_buffer_infos, s.command_buffer_info_count) }
            .iter()
            .map(|info| info.command_buffer)
    });
    let can_split = submit::splittable2(submits);
    traced_submit(
        tracer,
        "vkQueueSubmit2",
        queue,
        cmdbufs,
        can_split,
        plain,
        |wrap| {
            // SAFETY: the application's batches, untouched, between the layer's own.
            unsafe { submit::queue_submit2(&dev.dispatch, next, queue, submits, fence, wrap) }
        },
    )
}

/// # Safety
/// Vulkan's rules for `vkQueueSubmit2KHR` (an alias of `vkQueueSubmit2`).
pub unsafe extern "system" fn queue_submit2_khr(
    queue: vk::Queue,
    submit_count: u32,
    p_submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: same command, same rules.
    unsafe { queue_submit2(queue, submit_count, p_submits, fence) }
}

/// # Safety
/// Vulkan's rules for `vkQueuePresentKHR`.
pub unsafe extern "system" fn queue_present(
    queue: vk::Queue,
    p_present_info: *const vk::PresentInfoKHR<'_>,
) -> vk::Result {
    let dev = device_or!(queue, vk::Result::ERROR_DEVICE_LOST);
    let Some(next) = dev.dispatch.queue_present_khr else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { next(queue, p_present_info) };
    if let Some(tracer) = dev.tracer.as_ref() {
        // The frame ends whatever the presentation engine said (u_trace counts the same).
        guarded("vkQueuePresentKHR", || tracer.end_frame());
    }
    result
}
