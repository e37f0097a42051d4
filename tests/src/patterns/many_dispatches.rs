//! One command buffer with many dispatches: one batch of tens of thousands of events, far
//! more than Perfetto's shared memory between a producer and its service holds at once.

use ash::vk;

use crate::submitter::Submitter;
use crate::vk::{verify_fill, Buffer, Device, FillPipeline, Result};

/// Dispatches in the command buffer (each a traced range): in a debug build, enough for the
/// traceq thread to outrun Perfetto's service.
pub const DISPATCHES: u32 = 100_000;
/// Words each dispatch writes: one workgroup's worth, the work is not the point.
const WORDS: u32 = 64;

pub(super) fn many_dispatches(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let pipeline = FillPipeline::new(dev, &data)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    // Every dispatch writes the same words with the same values: no ordering is needed
    // for the result (synchronization validation would still call them hazards).
    for _ in 0..DISPATCHES {
        pipeline.record(dev, cb, 7, WORDS);
    }
    dev.end(cb)?;
    sub.submit("many-dispatches", &[cb], None)?;
    let ok = verify_fill(&data, 7, WORDS).is_ok();
    // SAFETY: the work completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &[cb]) };
    pipeline.destroy(dev);
    data.destroy(dev);
    Ok(ok)
}
