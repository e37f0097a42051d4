//! Queue hooks: submissions go to the trace core in one call (which makes them batches,
//! u_trace_flush) and presents end frames. After `vkQueueWaitIdle` the layer completes the
//! batches that waited for a later submission's signal; the application's wait itself is
//! for the GPU, never for the layer's writing.

use ash::vk;

use super::slice;

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
    // SAFETY: the application's array of `submit_count` batches.
    let submits = unsafe { slice(p_submits, submit_count) };
    // SAFETY: the application's arguments, for this device's queue.
    unsafe { tracer.queue_submit(queue, submits, fence) }
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
    // SAFETY: the application's array of `submit_count` batches.
    let submits = unsafe { slice(p_submits, submit_count) };
    // SAFETY: the application's arguments, for this device's queue; `next` is the next
    // layer's `vkQueueSubmit2`.
    unsafe { tracer.queue_submit2(next, queue, submits, fence) }
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
        tracer.guarded("vkQueuePresentKHR", || tracer.end_frame());
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkQueueWaitIdle`.
pub unsafe extern "system" fn queue_wait_idle(queue: vk::Queue) -> vk::Result {
    let dev = device_or!(queue, vk::Result::ERROR_DEVICE_LOST);
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { (dev.dispatch.fp_v1_0.queue_wait_idle)(queue) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        tracer.guarded("vkQueueWaitIdle", || tracer.queue_idle(queue));
    }
    result
}
