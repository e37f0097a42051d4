//! The application's submission, wrapped: `[re-arm] + the application's batches + [copy]`
//! in one call, so that the application's fence also covers the layer's copy. The
//! application's own `VkSubmitInfo`s are passed through untouched. In timeline mode the copy
//! batch signals the queue's timeline semaphore; in fence mode an empty submission with the
//! layer's fence follows (it signals once everything before it on the queue has completed).

use ash::vk;

use super::completion::Completion;
use super::queue_context::BatchResources;
use crate::loader::dispatch::DeviceDispatch;

/// The layer's two batches of one traced submission.
pub struct Wrapping<'a> {
    pub resources: &'a BatchResources,
    pub completion: Completion,
}

/// # Safety
/// The application's arguments must be valid for `vkQueueSubmit`.
pub unsafe fn queue_submit(
    d: &DeviceDispatch,
    queue: vk::Queue,
    app_submits: &[vk::SubmitInfo<'_>],
    fence: vk::Fence,
    wrap: &Wrapping<'_>,
) -> vk::Result {
    let (signal, value) = match wrap.completion {
        Completion::Timeline { semaphore, value } => (semaphore, value),
        Completion::Fence(_) => (vk::Semaphore::null(), 0),
    };
    let mut timeline_info = vk::TimelineSemaphoreSubmitInfo::default()
        .signal_semaphore_values(std::slice::from_ref(&value));
    let rearm =
        vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&wrap.resources.rearm));
    let mut copy =
        vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&wrap.resources.copy));
    if signal != vk::Semaphore::null() {
        copy = copy
            .signal_semaphores(std::slice::from_ref(&signal))
            .push_next(&mut timeline_info);
    }
    let mut all = Vec::with_capacity(app_submits.len() + 2);
    all.push(rearm);
    all.extend_from_slice(app_submits);
    all.push(copy);
    // SAFETY: the application's batches are unchanged; the layer's reference live objects.
    let result = unsafe { (d.fp_v1_0.queue_submit)(queue, all.len() as u32, all.as_ptr(), fence) };
    if result != vk::Result::SUCCESS {
        return result;
    }
    // SAFETY: as above.
    unsafe { submit_fence(d, queue, wrap) };
    result
}

/// # Safety
/// The application's arguments must be valid for `vkQueueSubmit2`, and `submit2` the next
/// layer's function.
pub unsafe fn queue_submit2(
    d: &DeviceDispatch,
    submit2: vk::PFN_vkQueueSubmit2,
    queue: vk::Queue,
    app_submits: &[vk::SubmitInfo2<'_>],
    fence: vk::Fence,
    wrap: &Wrapping<'_>,
) -> vk::Result {
    let rearm_cb = vk::CommandBufferSubmitInfo::default().command_buffer(wrap.resources.rearm);
    let copy_cb = vk::CommandBufferSubmitInfo::default().command_buffer(wrap.resources.copy);
    let signal = match wrap.completion {
        Completion::Timeline { semaphore, value } => Some(
            vk::SemaphoreSubmitInfo::default()
                .semaphore(semaphore)
                .value(value)
                .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS),
        ),
        Completion::Fence(_) => None,
    };
    let rearm = vk::SubmitInfo2::default().command_buffer_infos(std::slice::from_ref(&rearm_cb));
    let mut copy = vk::SubmitInfo2::default().command_buffer_infos(std::slice::from_ref(&copy_cb));
    if let Some(signal) = signal.as_ref() {
        copy = copy.signal_semaphore_infos(std::slice::from_ref(signal));
    }
    let mut all = Vec::with_capacity(app_submits.len() + 2);
    all.push(rearm);
    all.extend_from_slice(app_submits);
    all.push(copy);
    // SAFETY: the application's batches are unchanged; the layer's reference live objects.
    let result = unsafe { submit2(queue, all.len() as u32, all.as_ptr(), fence) };
    if result != vk::Result::SUCCESS {
        return result;
    }
    // SAFETY: as above.
    unsafe { submit_fence(d, queue, wrap) };
    result
}

/// In fence mode, an empty submission whose fence signals when the batch (and everything
/// before it on the queue) has completed.
///
/// # Safety
/// `queue` is externally synchronised by the application during its submit call.
unsafe fn submit_fence(d: &DeviceDispatch, queue: vk::Queue, wrap: &Wrapping<'_>) {
    if let Completion::Fence(fence) = wrap.completion {
        // SAFETY: the fence is unsignalled and owned by this batch.
        let r = unsafe { (d.fp_v1_0.queue_submit)(queue, 0, std::ptr::null(), fence) };
        if r != vk::Result::SUCCESS {
            log::error!("could not submit the layer's completion fence: {r}");
        }
    }
}
