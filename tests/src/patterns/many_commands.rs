//! One command buffer with very many traced commands: one batch of hundreds of thousands of
//! events, far more than Perfetto's shared memory between a producer and its service holds
//! at once. The commands are 4-byte fills, the cheapest traced range for the GPU to run.

use ash::vk;

use crate::submitter::Submitter;
use crate::vk::{Buffer, Device, Result};

/// Fills in the command buffer (each a traced range): in a debug build, enough for the
/// traceq thread to outrun Perfetto's service.
pub const COMMANDS: u32 = 100_000;

pub(super) fn many_commands(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let target = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    // Every fill writes the same word with the same value: no ordering is needed for the
    // result (synchronization validation would still call them hazards).
    for _ in 0..COMMANDS {
        // SAFETY: `cb` is recording; the buffer has TRANSFER_DST and holds 4 bytes at 0.
        unsafe {
            dev.device
                .cmd_fill_buffer(cb, target.buffer, 0, 4, 0x0707_0707)
        };
    }
    dev.end(cb)?;
    sub.submit("many-commands", &[cb], None)?;
    // SAFETY: the fill completed; the mapping holds at least 4 bytes.
    let ok = unsafe { (target.mapped as *const u32).read() } == 0x0707_0707;
    // SAFETY: the work completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &[cb]) };
    target.destroy(dev);
    Ok(ok)
}
