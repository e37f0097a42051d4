//! The application's own idle waits after many small batches, timed. They wait for the GPU,
//! which is done; they must not also wait for the layer to write its trace (which may be
//! slow: a pipe whose reader lags, a slow disk, a huge batch to format).

use ash::vk;

use super::record_transfer;
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, Result};

/// Enough batches for a trace larger than a pipe's buffer (64 KiB).
const BATCHES: usize = 300;

pub(super) fn idle_waits(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
    record_transfer(dev, cb, &buffer, 7);
    dev.end(cb)?;
    for i in 0..BATCHES {
        sub.submit(&format!("batch-{i}"), &[cb], None)?;
    }
    let d = &dev.device;
    let started = monotonic_ns();
    // SAFETY: a live device; nothing else uses it meanwhile.
    check(unsafe { d.device_wait_idle() }, "vkDeviceWaitIdle")?;
    sub.idle_waits_ns.push(monotonic_ns() - started);
    let started = monotonic_ns();
    // SAFETY: the device's queue; nothing else submits to it meanwhile.
    check(unsafe { d.queue_wait_idle(dev.queue) }, "vkQueueWaitIdle")?;
    sub.idle_waits_ns.push(monotonic_ns() - started);
    // SAFETY: all work completed.
    unsafe { d.free_command_buffers(dev.pool, &[cb]) };
    buffer.destroy(dev);
    Ok(true)
}
