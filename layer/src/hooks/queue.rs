//! Queue hooks: submissions go to the trace core in one call (which makes them batches,
//! u_trace_flush) and presents end frames. After `vkQueueWaitIdle` the layer completes the
//! batches that waited for a later submission's signal; the application's wait itself is
//! for the GPU, never for the layer's writing.

use ash::vk;

use super::slice;
use crate::gpu::submission::Submission;
use crate::loader::dispatch::DeviceDispatch;

/// Both submit hooks: the application's batches straight to the next layer's function
/// (`next` gives it) when the device is not traced, else to the trace core in one call.
///
/// # Safety
/// Vulkan's rules for the command of `S`.
unsafe fn submit<S: Submission>(
    queue: vk::Queue,
    submit_count: u32,
    p_submits: *const S,
    fence: vk::Fence,
    next: impl FnOnce(&DeviceDispatch) -> Option<S::Next>,
) -> vk::Result {
    let dev = device_or!(queue, vk::Result::ERROR_DEVICE_LOST);
    // The hook of `vkQueueSubmit2` is only handed out when the next layer has the command.
    let Some(next) = next(&dev.dispatch) else {
        return vk::Result::ERROR_FEATURE_NOT_PRESENT;
    };
    let Some(tracer) = dev.tracer.as_ref() else {
        // SAFETY: forwarded with the application's arguments.
        return unsafe { S::call(next, queue, submit_count, p_submits, fence) };
    };
    // SAFETY: the application's array of `submit_count` batches.
    let submits = unsafe { slice(p_submits, submit_count) };
    // SAFETY: the application's arguments, for this device's queue; `next` is the next
    // layer's function.
    unsafe { tracer.submit(next, queue, submits, fence) }
}

/// # Safety
/// Vulkan's rules for `vkQueueSubmit`.
pub unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    submit_count: u32,
    p_submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    let next = |d: &DeviceDispatch| Some(d.fp_v1_0.queue_submit);
    // SAFETY: the application's arguments.
    unsafe { submit(queue, submit_count, p_submits, fence, next) }
}

/// # Safety
/// Vulkan's rules for `vkQueueSubmit2`.
pub unsafe extern "system" fn queue_submit2(
    queue: vk::Queue,
    submit_count: u32,
    p_submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    let next = |d: &DeviceDispatch| d.queue_submit2;
    // SAFETY: the application's arguments.
    unsafe { submit(queue, submit_count, p_submits, fence, next) }
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
