//! Submissions of unusual shapes.

use ash::vk;

use super::{first_word, record_transfer};
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, Result};

/// Submissions without command buffers (fence only, semaphores only), several batches in
/// one call, the application's own timeline semaphore in the chain, the same through
/// vkQueueSubmit2: only batches with command buffers are traced, and every call counts as a
/// submission. (vkQueueBindSparse is not intercepted at all; Lavapipe has no sparse
/// binding to try it on.)
pub(super) fn odd_submits(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    // One buffer per command buffer: batches of one call are not ordered with each other.
    let buffers = (0..4)
        .map(|_| Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST))
        .collect::<Result<Vec<_>>>()?;
    let cbs = dev.command_buffers(4)?;
    for (i, &cb) in cbs.iter().enumerate() {
        dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
        record_transfer(dev, cb, &buffers[i], i as u32 + 10);
        dev.end(cb)?;
    }
    let fence = dev.fence()?;
    let binary = dev.semaphore()?;
    let timeline = dev.timeline_semaphore(0)?;
    // Each submission below is waited for before the next one uses its objects.
    // 1: nothing but a fence.
    check(
        // SAFETY: an empty submission with an unsignalled fence.
        unsafe { d.queue_submit(dev.queue, &[], fence) },
        "vkQueueSubmit",
    )?;
    dev.wait_and_reset(fence)?;
    // 2: a batch that only signals a semaphore, and 3: one that waits on it with work.
    let signal = [binary];
    check(
        // SAFETY: a batch that only signals an unsignalled binary semaphore.
        unsafe {
            d.queue_submit(
                dev.queue,
                &[vk::SubmitInfo::default().signal_semaphores(&signal)],
                vk::Fence::null(),
            )
        },
        "vkQueueSubmit",
    )?;
    let stages = [vk::PipelineStageFlags::TRANSFER];
    let before = monotonic_ns();
    let info = vk::SubmitInfo::default()
        .wait_semaphores(&signal)
        .wait_dst_stage_mask(&stages)
        .command_buffers(&cbs[..1]);
    check(
        // SAFETY: the batch waits on the semaphore signalled just before; the fence is unsignalled.
        unsafe { d.queue_submit(dev.queue, &[info], fence) },
        "vkQueueSubmit",
    )?;
    dev.wait_and_reset(fence)?;
    sub.note("after-semaphore", &cbs[..1], before, monotonic_ns());
    // 4: two batches in one call, the second signalling the application's timeline.
    let values = [1u64];
    let timelines = [timeline];
    let mut timeline_info =
        vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
    let before = monotonic_ns();
    let infos = [
        vk::SubmitInfo::default().command_buffers(&cbs[1..2]),
        vk::SubmitInfo::default()
            .command_buffers(&cbs[2..3])
            .signal_semaphores(&timelines)
            .push_next(&mut timeline_info),
    ];
    check(
        // SAFETY: recorded command buffers; the timeline's value 1 is above its current 0.
        unsafe { d.queue_submit(dev.queue, &infos, vk::Fence::null()) },
        "vkQueueSubmit",
    )?;
    let wait = vk::SemaphoreWaitInfo::default()
        .semaphores(&timelines)
        .values(&values);
    check(
        // SAFETY: waits for the value the batches above signal, with a timeout.
        unsafe { d.wait_semaphores(&wait, 10_000_000_000) },
        "vkWaitSemaphores",
    )?;
    sub.note("two-batches-timeline", &cbs[1..3], before, monotonic_ns());
    // 5: vkQueueSubmit2 with nothing but a fence, 6: with work and a timeline signal.
    check(
        // SAFETY: an empty vkQueueSubmit2 with an unsignalled fence (synchronization2 is on).
        unsafe { d.queue_submit2(dev.queue, &[], fence) },
        "vkQueueSubmit2",
    )?;
    dev.wait_and_reset(fence)?;
    let cb_info = [vk::CommandBufferSubmitInfo::default().command_buffer(cbs[3])];
    let signal2 = [vk::SemaphoreSubmitInfo::default()
        .semaphore(timeline)
        .value(2)
        .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
    let before = monotonic_ns();
    let info2 = vk::SubmitInfo2::default()
        .command_buffer_infos(&cb_info)
        .signal_semaphore_infos(&signal2);
    check(
        // SAFETY: a recorded command buffer; the timeline's value 2 is above its current 1.
        unsafe { d.queue_submit2(dev.queue, &[info2], vk::Fence::null()) },
        "vkQueueSubmit2",
    )?;
    let values2 = [2u64];
    let wait2 = vk::SemaphoreWaitInfo::default()
        .semaphores(&timelines)
        .values(&values2);
    check(
        // SAFETY: waits for the value the batch above signals, with a timeout.
        unsafe { d.wait_semaphores(&wait2, 10_000_000_000) },
        "vkWaitSemaphores",
    )?;
    sub.note("submit2-timeline", &cbs[3..4], before, monotonic_ns());
    let ok = buffers
        .iter()
        .enumerate()
        .all(|(i, b)| first_word(b) == i as u32 + 10);
    // SAFETY: everything completed.
    unsafe {
        d.destroy_semaphore(binary, None);
        d.destroy_semaphore(timeline, None);
        d.destroy_fence(fence, None);
        d.free_command_buffers(dev.pool, &cbs);
    }
    for b in buffers {
        b.destroy(dev);
    }
    Ok(ok)
}
