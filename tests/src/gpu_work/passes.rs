//! Render pass scenarios: a classic render pass with every draw command, a two-subpass
//! render pass made with vkCreateRenderPass2, and dynamic rendering (with a render pass
//! suspended in one command buffer and resumed in the next); secondaries executed in a
//! render pass are in `secondaries.rs`.

use ash::vk;

use super::graphics::{
    self, area, clears, framebuffer, Image, Pipeline, Target, COLOR, DEPTH, SIZE,
};
use super::scene_target::SceneTarget;
use super::{free, record_once, used};
use crate::submitter::Submitter;
use crate::vk::{Buffer, Device, Instance, Result};

/// The color the fragment shader writes, as R8G8B8A8_UNORM bytes.
pub(crate) const ORANGE: [u8; 4] = [255, 128, 0, 255];

/// Copies the center pixel of a TRANSFER_SRC color image into `buffer`.
pub(crate) fn read_center(dev: &Device, cb: vk::CommandBuffer, image: vk::Image, buffer: &Buffer) {
    let region = vk::BufferImageCopy::default()
        .image_subresource(graphics::layers(vk::ImageAspectFlags::COLOR))
        .image_offset(vk::Offset3D {
            x: SIZE as i32 / 2,
            y: SIZE as i32 / 2,
            z: 0,
        })
        .image_extent(vk::Extent3D {
            width: 1,
            height: 1,
            depth: 1,
        });
    // SAFETY: `cb` is recording outside a render pass; the image is in TRANSFER_SRC.
    unsafe {
        dev.device.cmd_copy_image_to_buffer(
            cb,
            image,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            buffer.buffer,
            &[region],
        )
    };
}

pub(crate) fn pixel_is(buffer: &Buffer, want: [u8; 4], what: &str) -> bool {
    // SAFETY: the mapping covers at least 4 bytes; the GPU work completed.
    let got = unsafe { std::slice::from_raw_parts(buffer.mapped, 4) };
    if got == want {
        true
    } else {
        eprintln!("utrace-workload: {what}: center pixel {got:?}, expected {want:?}");
        false
    }
}

/// Every draw command in one classic render pass (the indirect-count and multi-draw ones
/// where the device has them, noted in `features`), then two subpasses of a render pass
/// made with vkCreateRenderPass2.
pub fn render_pass(
    inst: &Instance,
    dev: &Device,
    sub: &mut Submitter,
    features: &mut Vec<String>,
) -> Result<bool> {
    let d = &dev.device;
    let target = SceneTarget::new(dev, true)?;
    let indices = Buffer::new(dev, 64, vk::BufferUsageFlags::INDEX_BUFFER)?;
    let indirect = Buffer::new(dev, 256, vk::BufferUsageFlags::INDIRECT_BUFFER)?;
    let readback = Buffer::new(dev, 64, vk::BufferUsageFlags::TRANSFER_DST)?;
    // Indices 0, 1, 2; two DrawIndirectCommands at 0; one DrawIndexedIndirectCommand at 32;
    // draw counts 2 and 1 at 64 and 68.
    let words: &[(usize, &[u32])] = &[
        (0, &[3, 1, 0, 0, 3, 1, 0, 0]),
        (8, &[3, 1, 0, 0, 0]),
        (16, &[2, 1]),
    ];
    // SAFETY: the mappings are large enough and no GPU work uses them yet.
    unsafe {
        std::ptr::copy_nonoverlapping([0u32, 1, 2].as_ptr(), indices.mapped as *mut u32, 3);
        for (at, w) in words {
            std::ptr::copy_nonoverlapping(
                w.as_ptr(),
                (indirect.mapped as *mut u32).add(*at),
                w.len(),
            );
        }
    }
    let multi = ash::ext::multi_draw::Device::new(&inst.instance, d);
    let cb = record_once(dev, |cb| {
        let begin = target.begin_info();
        // SAFETY: `cb` is recording; every object belongs to this device and the buffers
        // hold what the draws read.
        unsafe {
            d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
            target.pipeline.bind(dev, cb);
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_bind_index_buffer(cb, indices.buffer, 0, vk::IndexType::UINT32);
            d.cmd_draw_indexed(cb, 3, 2, 0, 0, 0);
            d.cmd_draw_indirect(cb, indirect.buffer, 0, 2, 16);
            d.cmd_draw_indexed_indirect(cb, indirect.buffer, 32, 1, 20);
            if dev.draw_indirect_count {
                d.cmd_draw_indirect_count(cb, indirect.buffer, 0, indirect.buffer, 64, 2, 16);
                d.cmd_draw_indexed_indirect_count(
                    cb,
                    indirect.buffer,
                    32,
                    indirect.buffer,
                    68,
                    1,
                    20,
                );
            }
            let draws = [vk::MultiDrawInfoEXT {
                first_vertex: 0,
                vertex_count: 3,
            }; 2];
            if dev.multi_draw {
                (multi.fp().cmd_draw_multi_ext)(
                    cb,
                    draws.len() as u32,
                    draws.as_ptr(),
                    1,
                    0,
                    std::mem::size_of::<vk::MultiDrawInfoEXT>() as u32,
                );
            }
            d.cmd_end_render_pass(cb);
        }
        read_center(dev, cb, target.color.image, &readback);
        Ok(())
    })?;
    sub.submit("render-pass", &[cb], None)?;
    if dev.draw_indirect_count {
        used(features, "draw_indirect_count");
    }
    if dev.multi_draw {
        used(features, "multi_draw");
    }
    let mut ok = pixel_is(&readback, ORANGE, "render-pass");

    // Two subpasses through the render pass 2 commands.
    let pass2 = graphics::render_pass2_two_subpasses(dev)?;
    let fb2 = framebuffer(dev, pass2, &[target.color.view])?;
    let first = Pipeline::new(
        dev,
        Target::Subpass {
            pass: pass2,
            subpass: 0,
            depth: false,
        },
    )?;
    let second = Pipeline::new(
        dev,
        Target::Subpass {
            pass: pass2,
            subpass: 1,
            depth: false,
        },
    )?;
    let clear_values = clears(false);
    let cb2 = record_once(dev, |cb| {
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(pass2)
            .framebuffer(fb2)
            .render_area(area())
            .clear_values(&clear_values);
        let inline = vk::SubpassBeginInfo::default().contents(vk::SubpassContents::INLINE);
        let end = vk::SubpassEndInfo::default();
        // SAFETY: `cb` is recording; render pass 2 commands are core 1.2.
        unsafe {
            d.cmd_begin_render_pass2(cb, &begin, &inline);
            first.bind(dev, cb);
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_next_subpass2(cb, &inline, &end);
            second.bind(dev, cb);
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_end_render_pass2(cb, &end);
        }
        read_center(dev, cb, target.color.image, &readback);
        Ok(())
    })?;
    // SAFETY: no GPU work is pending on the readback buffer.
    unsafe { std::ptr::write_bytes(readback.mapped, 0, 4) };
    sub.submit("render-pass2", &[cb2], None)?;
    ok &= pixel_is(&readback, ORANGE, "render-pass2");

    free(dev, &[cb, cb2]);
    // SAFETY: no pending work uses these objects.
    unsafe {
        d.destroy_framebuffer(fb2, None);
        d.destroy_render_pass(pass2, None);
    }
    for p in [first, second] {
        p.destroy(dev);
    }
    for b in [indices, indirect, readback] {
        b.destroy(dev);
    }
    target.destroy(dev);
    Ok(ok)
}

fn rendering_info<'a>(
    color: &'a [vk::RenderingAttachmentInfo<'a>],
    depth: &'a vk::RenderingAttachmentInfo<'a>,
    flags: vk::RenderingFlags,
) -> vk::RenderingInfo<'a> {
    vk::RenderingInfo::default()
        .flags(flags)
        .render_area(area())
        .layer_count(1)
        .color_attachments(color)
        .depth_attachment(depth)
}

/// Dynamic rendering around two draws; then one render pass suspended at the end of one
/// command buffer and resumed at the start of the next, both in one batch.
pub fn dynamic_rendering(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let color = Image::new(
        dev,
        COLOR,
        vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
        vk::SampleCountFlags::TYPE_1,
    )?;
    let depth = Image::new(
        dev,
        DEPTH,
        vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
        vk::SampleCountFlags::TYPE_1,
    )?;
    let pipeline = Pipeline::new(dev, Target::Dynamic { depth: true })?;
    let readback = Buffer::new(dev, 64, vk::BufferUsageFlags::TRANSFER_DST)?;
    let clear = clears(true);
    let color_att = [vk::RenderingAttachmentInfo::default()
        .image_view(color.view)
        .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .clear_value(clear[0])];
    let depth_att = vk::RenderingAttachmentInfo::default()
        .image_view(depth.view)
        .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::DONT_CARE)
        .clear_value(clear[1]);
    let to_attachments = |cb| {
        graphics::transition(
            dev,
            cb,
            color.image,
            vk::ImageAspectFlags::COLOR,
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
        );
        graphics::transition(
            dev,
            cb,
            depth.image,
            vk::ImageAspectFlags::DEPTH,
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
        );
    };
    let to_readback = |cb| {
        graphics::transition(
            dev,
            cb,
            color.image,
            vk::ImageAspectFlags::COLOR,
            vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        );
        read_center(dev, cb, color.image, &readback);
    };

    let cb = record_once(dev, |cb| {
        to_attachments(cb);
        // SAFETY: `cb` is recording; dynamic rendering is enabled; attachments in place.
        unsafe {
            d.cmd_begin_rendering(
                cb,
                &rendering_info(&color_att, &depth_att, vk::RenderingFlags::empty()),
            );
            pipeline.bind(dev, cb);
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_draw(cb, 3, 2, 0, 0);
            d.cmd_end_rendering(cb);
        }
        to_readback(cb);
        Ok(())
    })?;
    sub.submit("dynamic-rendering", &[cb], None)?;
    let mut ok = pixel_is(&readback, ORANGE, "dynamic-rendering");

    // Suspended at the end of the first command buffer, resumed at the start of the second:
    // nothing else may be recorded between the two.
    let suspending = record_once(dev, |cb| {
        to_attachments(cb);
        // SAFETY: as above; the render pass instance is resumed in the next command buffer
        // of the same batch.
        unsafe {
            d.cmd_begin_rendering(
                cb,
                &rendering_info(&color_att, &depth_att, vk::RenderingFlags::SUSPENDING),
            );
            pipeline.bind(dev, cb);
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_end_rendering(cb);
        }
        Ok(())
    })?;
    let resuming = record_once(dev, |cb| {
        // SAFETY: resumes the instance suspended by the previous command buffer.
        unsafe {
            d.cmd_begin_rendering(
                cb,
                &rendering_info(&color_att, &depth_att, vk::RenderingFlags::RESUMING),
            );
            pipeline.bind(dev, cb);
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_end_rendering(cb);
        }
        to_readback(cb);
        Ok(())
    })?;
    // SAFETY: no GPU work is pending on the readback buffer.
    unsafe { std::ptr::write_bytes(readback.mapped, 0, 4) };
    sub.submit("suspend-resume", &[suspending, resuming], None)?;
    ok &= pixel_is(&readback, ORANGE, "suspend-resume");

    free(dev, &[cb, suspending, resuming]);
    pipeline.destroy(dev);
    readback.destroy(dev);
    color.destroy(dev);
    depth.destroy(dev);
    Ok(ok)
}
