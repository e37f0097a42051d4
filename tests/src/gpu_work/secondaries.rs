//! Secondary command buffers: two drawing inside a render pass whose contents are
//! secondaries, and one dispatching outside any render pass, executed by one primary.

use ash::vk;
use ash::vk::Handle;

use super::passes::{pixel_is, read_center, ORANGE};
use super::scene_target::SceneTarget;
use super::{free, record_once};
use crate::submitter::Submitter;
use crate::vk::{Buffer, Device, FillPipeline, Result};

/// Two secondaries drawing inside a render pass whose contents are secondary command
/// buffers, and one dispatching outside any render pass, all executed by one primary.
pub fn secondaries(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let target = SceneTarget::new(dev, false)?;
    let (pass, fb) = (target.pass, target.framebuffer);
    let data = Buffer::new(dev, 4096 * 4, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let fill = FillPipeline::new(dev, &data)?;
    let readback = Buffer::new(dev, 64, vk::BufferUsageFlags::TRANSFER_DST)?;

    let in_pass = vk::CommandBufferInheritanceInfo::default()
        .render_pass(pass)
        .subpass(0)
        .framebuffer(fb);
    let draw = |cb| {
        target.pipeline.bind(dev, cb);
        // SAFETY: `cb` continues the render pass with the pipeline bound.
        unsafe { d.cmd_draw(cb, 3, 1, 0, 0) };
    };
    let continuing = vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE;
    let s1 = dev.secondary(continuing, &in_pass, draw)?;
    let s2 = dev.secondary(continuing, &in_pass, draw)?;
    let outside = vk::CommandBufferInheritanceInfo::default();
    let s3 = dev.secondary(vk::CommandBufferUsageFlags::empty(), &outside, |cb| {
        fill.record(dev, cb, 5, 4096)
    })?;

    let primary = record_once(dev, |cb| {
        let begin = target.begin_info();
        // SAFETY: `cb` is recording; the secondaries were recorded for this render pass
        // (or for outside one).
        unsafe {
            d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::SECONDARY_COMMAND_BUFFERS);
            d.cmd_execute_commands(cb, &[s1, s2]);
            d.cmd_end_render_pass(cb);
            d.cmd_execute_commands(cb, &[s3]);
        }
        read_center(dev, cb, target.color.image, &readback);
        Ok(())
    })?;
    sub.submit("secondaries", &[primary], None)?;
    if let Some(last) = sub.log.last_mut() {
        last.secondaries = [s1, s2, s3]
            .iter()
            .map(|cb| format!("{:#x}", cb.as_raw()))
            .collect();
    }
    let ok =
        pixel_is(&readback, ORANGE, "secondaries") & crate::vk::verify_fill(&data, 5, 4096).is_ok();

    free(dev, &[primary, s1, s2, s3]);
    target.destroy(dev);
    fill.destroy(dev);
    data.destroy(dev);
    readback.destroy(dev);
    Ok(ok)
}
