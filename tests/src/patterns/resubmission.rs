//! Command buffers submitted again and again: resubmitted for many frames, pending twice,
//! run twice by one call, many submissions in flight at destroy, and the soak.

use ash::vk;

use super::{first_word, record_transfer};
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, Result};

/// One reusable command buffer, recorded once and submitted `frames` times; each
/// submission waits for its fence and the next follows at once, before the layer has
/// necessarily read the previous one's timestamps.
pub(super) fn resubmit(dev: &Device, sub: &mut Submitter, frames: u32) -> Result<bool> {
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
    record_transfer(dev, cb, &buffer, 0x1234);
    dev.end(cb)?;
    for i in 0..frames {
        sub.submit(&format!("resubmit-{i}"), &[cb], None)?;
    }
    let ok = first_word(&buffer) == 0x1234;
    // SAFETY: every submission completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &[cb]) };
    buffer.destroy(dev);
    Ok(ok)
}

/// A SIMULTANEOUS_USE command buffer pending in two submissions at once.
pub(super) fn simultaneous(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
    record_transfer(dev, cb, &buffer, 0x55);
    dev.end(cb)?;
    let fences = [dev.fence()?, dev.fence()?];
    let mut before = [0u64; 2];
    for (k, &fence) in fences.iter().enumerate() {
        let info = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cb));
        before[k] = monotonic_ns();
        check(
            // SAFETY: a recorded simultaneous-use command buffer; the fences are unsignalled.
            unsafe { dev.device.queue_submit(dev.queue, &[info], fence) },
            "vkQueueSubmit",
        )?;
    }
    for (k, &fence) in fences.iter().enumerate() {
        dev.wait_and_reset(fence)?;
        sub.note(
            &format!("simultaneous-{}", k + 1),
            &[cb],
            before[k],
            monotonic_ns(),
        );
    }
    let ok = first_word(&buffer) == 0x55;
    // SAFETY: both submissions completed.
    unsafe {
        for f in fences {
            dev.device.destroy_fence(f, None);
        }
        dev.device.free_command_buffers(dev.pool, &[cb]);
    }
    buffer.destroy(dev);
    Ok(ok)
}

/// A simultaneous-use command buffer run twice by one call: twice in one batch, in two
/// batches of one vkQueueSubmit, and twice through vkQueueSubmit2.
pub(super) fn twice_in_one_submit(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
    record_transfer(dev, cb, &buffer, 9);
    dev.end(cb)?;
    let fence = dev.fence()?;
    let pair = [cb, cb];
    // The fence is waited for and reset after each of the three calls below.
    let before = monotonic_ns();
    let info = vk::SubmitInfo::default().command_buffers(&pair);
    check(
        // SAFETY: a simultaneous-use command buffer may run twice in one batch; the fence is unsignalled.
        unsafe { d.queue_submit(dev.queue, &[info], fence) },
        "vkQueueSubmit",
    )?;
    dev.wait_and_reset(fence)?;
    sub.note("twice-in-one-batch", &pair, before, monotonic_ns());

    let before = monotonic_ns();
    let one = vk::SubmitInfo::default().command_buffers(&pair[..1]);
    check(
        // SAFETY: a simultaneous-use command buffer may run in two batches of one call; the fence is unsignalled.
        unsafe { d.queue_submit(dev.queue, &[one, one], fence) },
        "vkQueueSubmit",
    )?;
    dev.wait_and_reset(fence)?;
    sub.note("twice-in-two-batches", &pair, before, monotonic_ns());

    let infos = [vk::CommandBufferSubmitInfo::default().command_buffer(cb); 2];
    let before = monotonic_ns();
    let info2 = vk::SubmitInfo2::default().command_buffer_infos(&infos);
    check(
        // SAFETY: a simultaneous-use command buffer may run twice in one vkQueueSubmit2 batch; the fence is unsignalled.
        unsafe { d.queue_submit2(dev.queue, &[info2], fence) },
        "vkQueueSubmit2",
    )?;
    dev.wait_and_reset(fence)?;
    sub.note("twice-through-submit2", &pair, before, monotonic_ns());

    let ok = first_word(&buffer) == 9;
    // SAFETY: every submission completed.
    unsafe {
        d.destroy_fence(fence, None);
        d.free_command_buffers(dev.pool, &[cb]);
    }
    buffer.destroy(dev);
    Ok(ok)
}

/// `count` submissions made back to back without waiting, then only the last one's fence
/// is waited for and the device is destroyed at once: the layer has most of the batches
/// still to read when vkDestroyDevice comes.
pub(super) fn in_flight(dev: &Device, sub: &mut Submitter, count: u32) -> Result<bool> {
    let d = &dev.device;
    let buffers = (0..count)
        .map(|_| Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST))
        .collect::<Result<Vec<_>>>()?;
    let cbs = dev.command_buffers(count)?;
    for (i, &cb) in cbs.iter().enumerate() {
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        record_transfer(dev, cb, &buffers[i], i as u32);
        dev.end(cb)?;
    }
    let fence = dev.fence()?;
    let mut before = Vec::with_capacity(cbs.len());
    for (i, cb) in cbs.iter().enumerate() {
        let last = i + 1 == cbs.len();
        let info = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(cb));
        before.push(monotonic_ns());
        check(
            // SAFETY: recorded one-time command buffers, each submitted once; the fence only
            // with the last (the queue completes in submission order).
            unsafe {
                d.queue_submit(
                    dev.queue,
                    &[info],
                    if last { fence } else { vk::Fence::null() },
                )
            },
            "vkQueueSubmit",
        )?;
    }
    dev.wait_and_reset(fence)?;
    let after = monotonic_ns();
    for (i, cb) in cbs.iter().enumerate() {
        sub.note(
            &format!("in-flight-{i}"),
            std::slice::from_ref(cb),
            before[i],
            after,
        );
    }
    let ok = buffers
        .iter()
        .enumerate()
        .all(|(i, b)| first_word(b) == i as u32);
    // SAFETY: every submission completed (the queue finished the last one).
    unsafe {
        d.destroy_fence(fence, None);
        d.free_command_buffers(dev.pool, &cbs);
    }
    for b in buffers {
        b.destroy(dev);
    }
    Ok(ok)
}

/// Submissions between waits for the layer to catch up (debug builds of the layer only):
/// its queues' high-water marks then follow the application, not how far a busy machine
/// let the traceq thread fall behind.
const CATCH_UP_EVERY: u32 = 100;

/// `count` submissions of two reusable command buffers, not logged one by one; resident
/// memory sampled ten times along the way (the first sample after a warm-up tenth). With a
/// debug build of the layer, every [`CATCH_UP_EVERY`] submissions wait until its traceq
/// thread released them, so that what grows is what the layer keeps, not what it has yet
/// to write.
pub(super) fn soak(dev: &Device, sub: &mut Submitter, count: u32) -> Result<bool> {
    let released = super::layer_debug::batches_released().ok();
    let buffers = [
        Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?,
        Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?,
    ];
    let cbs = dev.command_buffers(2)?;
    for (i, &cb) in cbs.iter().enumerate() {
        dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
        record_transfer(dev, cb, &buffers[i], i as u32 + 1);
        dev.end(cb)?;
    }
    let tenth = (count / 10).max(1);
    for i in 0..count {
        sub.submit_unlogged(&cbs[i as usize % 2..i as usize % 2 + 1])?;
        if let Some(released) = released.filter(|_| (i + 1) % CATCH_UP_EVERY == 0) {
            super::layer_debug::wait_released(released, u64::from(i + 1))?;
        }
        if (i + 1) % tenth == 0 {
            sub.rss_kib.push(crate::report::rss_kib());
        }
    }
    let ok = first_word(&buffers[0]) == 1 && first_word(&buffers[1]) == 2;
    // SAFETY: every submission completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &cbs) };
    for b in buffers {
        b.destroy(dev);
    }
    Ok(ok)
}
