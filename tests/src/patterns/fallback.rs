//! A reusable command buffer submitted once together with one that makes the layer wrap the
//! submission, then alone again: with the layer's own command buffers failing to record
//! (the fault layer's `vkBeginCommandBuffer`), the wrapped submission goes down as the
//! application made it, and the runs after it must still find their queries reset.

use ash::vk;

use super::{first_word, record_transfer};
use crate::submitter::Submitter;
use crate::vk::{Buffer, Device, Result};

/// Submissions of the reusable command buffer alone after the one it shares.
const AFTER: u32 = 3;

pub(super) fn fallback(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cbs = dev.command_buffers(2)?;
    let (reusable, simultaneous) = (cbs[0], cbs[1]);
    // Everything is recorded first: the faults that follow hit only the layer's own
    // recordings.
    dev.begin(reusable, vk::CommandBufferUsageFlags::empty())?;
    record_transfer(dev, reusable, &buffer, 0x77);
    dev.end(reusable)?;
    // A simultaneous-use command buffer is never run from reset queries alone: a
    // submission that holds one is wrapped by the layer's command buffers.
    dev.begin(simultaneous, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
    record_transfer(dev, simultaneous, &buffer, 0x77);
    dev.end(simultaneous)?;
    sub.submit("alone-first", &[reusable], None)?;
    sub.submit("together", &[reusable, simultaneous], None)?;
    for i in 0..AFTER {
        sub.submit(&format!("alone-{i}"), &[reusable], None)?;
    }
    let ok = first_word(&buffer) == 0x77;
    // SAFETY: every submission completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &cbs) };
    buffer.destroy(dev);
    Ok(ok)
}
