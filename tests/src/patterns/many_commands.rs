//! One command buffer with very many traced commands: one batch of hundreds of thousands of
//! events, far more than Perfetto's shared memory between a producer and its service holds
//! at once. `many-commands`: 4-byte fills, the cheapest traced range for the GPU to run.
//! `many-draws`: the path most applications take, a one-time command buffer with a render
//! pass of draws of a visible triangle.

use ash::vk;

use crate::gpu_work::graphics::{self, area, framebuffer, Image, Pipeline, Target, COLOR};
use crate::gpu_work::passes::{pixel_is, read_center, ORANGE};
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

/// One one-time command buffer of a render pass holding `draws` draws of a small triangle,
/// submitted once and waited for; the device is destroyed right after (the trace must be
/// written whole before it goes). Checks that the triangle was drawn (a second batch).
pub(super) fn many_draws(dev: &Device, sub: &mut Submitter, draws: u32) -> Result<bool> {
    let d = &dev.device;
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
    let color = Image::new(dev, COLOR, usage, vk::SampleCountFlags::TYPE_1)?;
    let pass = graphics::render_pass(dev, false)?;
    let fb = framebuffer(dev, pass, &[color.view])?;
    let target = Target::Subpass {
        pass,
        subpass: 0,
        depth: false,
    };
    let pipeline = Pipeline::new(dev, target)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    let clear = graphics::clears(false);
    let begin = vk::RenderPassBeginInfo::default()
        .render_pass(pass)
        .framebuffer(fb)
        .render_area(area())
        .clear_values(&clear);
    // SAFETY: `cb` is recording outside a render pass; the pipeline was made for the pass.
    unsafe {
        d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
        pipeline.bind(dev, cb);
        for _ in 0..draws {
            d.cmd_draw(cb, 3, 1, 0, 0);
        }
        d.cmd_end_render_pass(cb);
    }
    dev.end(cb)?;
    // Lavapipe runs a million triangles with their timestamps in about a minute: the
    // harness's limit (scaled by UTRACE_TEST_TIME_FACTOR) is the guard.
    dev.fence_timeout_ns
        .store(u64::MAX, std::sync::atomic::Ordering::Relaxed);
    sub.submit("many-draws", &[cb], None)?;
    // The center pixel read in a batch of its own: the draws' batch holds only them.
    let readback = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let read = dev.command_buffers(1)?[0];
    dev.begin(read, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    read_center(dev, read, color.image, &readback);
    dev.end(read)?;
    sub.submit("many-draws-readback", &[read], None)?;
    let drawn = pixel_is(&readback, ORANGE, "many-draws");
    // SAFETY: the work completed.
    unsafe {
        d.free_command_buffers(dev.pool, &[cb, read]);
        d.destroy_framebuffer(fb, None);
        d.destroy_render_pass(pass, None);
    }
    pipeline.destroy(dev);
    color.destroy(dev);
    readback.destroy(dev);
    Ok(drawn)
}
