//! Render-pass patterns: multiview, and secondaries reused or run twice.

use ash::vk;

use super::{first_word, record_transfer};
use crate::gpu_work::graphics::{self, Pipeline, Target, COLOR};
use crate::submitter::Submitter;
use crate::vk::{Buffer, Device, Result};

/// A draw in a multiview render pass (two views): every timestamp written inside it takes
/// one query per view.
pub(super) fn multiview(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let image = graphics::Image::layered(dev, COLOR, 2)?;
    let pass = graphics::multiview_render_pass(dev, 0b11)?;
    let fb = graphics::framebuffer(dev, pass, &[image.view])?;
    let pipeline = Pipeline::new(
        dev,
        Target::Subpass {
            pass,
            subpass: 0,
            depth: false,
        },
    )?;
    let clear_values = graphics::clears(false);
    // One one-time command buffer, then a reusable one submitted twice.
    let cbs = dev.command_buffers(2)?;
    let usages = [
        vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
        vk::CommandBufferUsageFlags::empty(),
    ];
    for (&cb, usage) in cbs.iter().zip(usages) {
        dev.begin(cb, usage)?;
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(pass)
            .framebuffer(fb)
            .render_area(graphics::area())
            .clear_values(&clear_values);
        // SAFETY: `cb` is recording; the pipeline was made for this multiview render pass.
        unsafe {
            d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
            pipeline.bind(dev, cb);
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_end_render_pass(cb);
        }
        dev.end(cb)?;
    }
    sub.submit("multiview", &cbs[..1], None)?;
    sub.submit("multiview-reusable-1", &cbs[1..], None)?;
    sub.submit("multiview-reusable-2", &cbs[1..], None)?;
    // SAFETY: the submissions completed.
    unsafe {
        d.free_command_buffers(dev.pool, &cbs);
        d.destroy_framebuffer(fb, None);
        d.destroy_render_pass(pass, None);
    }
    pipeline.destroy(dev);
    image.destroy(dev);
    Ok(true)
}

/// A reusable secondary executed from two different primaries in turn, a reusable primary
/// executing it submitted twice, and a simultaneous-use secondary executed twice in one
/// render pass instance (which the layer leaves untimed).
pub(super) fn secondary_reuse(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    use ash::vk::Handle;
    let d = &dev.device;
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let outside = vk::CommandBufferInheritanceInfo::default();
    let reusable = dev.secondary(vk::CommandBufferUsageFlags::empty(), &outside, |cb| {
        record_transfer(dev, cb, &buffer, 77)
    })?;
    let primaries = dev.command_buffers(2)?;
    let execute = |primary, usage| -> Result<()> {
        dev.begin(primary, usage)?;
        // SAFETY: `primary` is recording outside a render pass; the secondary was recorded
        // for that.
        unsafe { d.cmd_execute_commands(primary, &[reusable]) };
        dev.end(primary)
    };
    let name = |cb: vk::CommandBuffer| format!("{:#x}", cb.as_raw());
    // From one primary, then (re-recorded into) another.
    execute(primaries[0], vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    sub.submit("secondary-from-first", &primaries[..1], None)?;
    execute(primaries[1], vk::CommandBufferUsageFlags::empty())?;
    sub.submit("secondary-from-second", &primaries[1..], None)?;
    // The second primary is reusable: submitted again, the secondary runs again.
    sub.submit("secondary-again", &primaries[1..], None)?;
    for s in sub.log.iter_mut().rev().take(3) {
        s.secondaries = vec![name(reusable)];
    }

    // A simultaneous-use secondary executed twice in one render pass instance.
    let image = graphics::Image::new(
        dev,
        COLOR,
        vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
        vk::SampleCountFlags::TYPE_1,
    )?;
    let pass = graphics::render_pass(dev, false)?;
    let fb = graphics::framebuffer(dev, pass, &[image.view])?;
    let pipeline = Pipeline::new(
        dev,
        Target::Subpass {
            pass,
            subpass: 0,
            depth: false,
        },
    )?;
    let in_pass = vk::CommandBufferInheritanceInfo::default()
        .render_pass(pass)
        .subpass(0)
        .framebuffer(fb);
    let twice = dev.secondary(
        vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE
            | vk::CommandBufferUsageFlags::SIMULTANEOUS_USE,
        &in_pass,
        |cb| {
            pipeline.bind(dev, cb);
            // SAFETY: `cb` continues the render pass with the pipeline bound.
            unsafe { d.cmd_draw(cb, 3, 1, 0, 0) };
        },
    )?;
    let clear_values = graphics::clears(false);
    let primary = dev.command_buffers(1)?[0];
    dev.begin(primary, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    let begin = vk::RenderPassBeginInfo::default()
        .render_pass(pass)
        .framebuffer(fb)
        .render_area(graphics::area())
        .clear_values(&clear_values);
    // SAFETY: `primary` is recording; the secondary may run twice (simultaneous use).
    unsafe {
        d.cmd_begin_render_pass(
            primary,
            &begin,
            vk::SubpassContents::SECONDARY_COMMAND_BUFFERS,
        );
        d.cmd_execute_commands(primary, &[twice, twice]);
        d.cmd_end_render_pass(primary);
    }
    dev.end(primary)?;
    sub.submit("simultaneous-secondary-twice", &[primary], None)?;

    let ok = first_word(&buffer) == 77;
    // SAFETY: every submission completed.
    unsafe {
        d.free_command_buffers(dev.pool, &primaries);
        d.free_command_buffers(dev.pool, &[reusable, twice, primary]);
        d.destroy_framebuffer(fb, None);
        d.destroy_render_pass(pass, None);
    }
    pipeline.destroy(dev);
    image.destroy(dev);
    buffer.destroy(dev);
    Ok(ok)
}
