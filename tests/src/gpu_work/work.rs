//! Compute, transfer and label scenarios.

use ash::vk;

use super::graphics::{
    self, area, clears, framebuffer, full_barrier, layers, range, transition, Image, COLOR, DEPTH,
    SIZE,
};
use super::{free, record_once, used};
use crate::submitter::Submitter;
use crate::vk::{verify_fill, Buffer, Device, FillPipeline, Instance, Result};

const WORDS: u32 = 4096;

/// Whether a check passed; a failure is said on stderr.
fn report(r: Result<()>) -> bool {
    r.map_err(|e| eprintln!("utrace-workload: {e}")).is_ok()
}

/// vkCmdDispatch, vkCmdDispatchBase and vkCmdDispatchIndirect, each after the previous one's
/// writes.
pub fn compute(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let fill = FillPipeline::new(dev, &data)?;
    let based = FillPipeline::with_flags(dev, &data, vk::PipelineCreateFlags::DISPATCH_BASE)?;
    let indirect = Buffer::new(dev, 64, vk::BufferUsageFlags::INDIRECT_BUFFER)?;
    // SAFETY: the mapping holds 3 words and no GPU work uses it yet.
    unsafe {
        std::ptr::copy_nonoverlapping(
            [WORDS / 64, 1u32, 1].as_ptr(),
            indirect.mapped as *mut u32,
            3,
        )
    };
    // The indirect dispatch comes before the based one: Lavapipe 22.3 keeps the base group
    // of a vkCmdDispatchBase for a later vkCmdDispatchIndirect.
    let cb = record_once(dev, |cb| {
        fill.record(dev, cb, 1, WORDS);
        full_barrier(dev, cb);
        fill.record_bindings(dev, cb, &fill, 9, WORDS);
        // SAFETY: `cb` is recording; the indirect buffer holds a dispatch command.
        unsafe { d.cmd_dispatch_indirect(cb, indirect.buffer, 0) };
        full_barrier(dev, cb);
        // The base pipeline's bindings, then a dispatch of groups 1.. (words 64..).
        fill.record_bindings(dev, cb, &based, 7, WORDS);
        // SAFETY: `cb` is recording with a DISPATCH_BASE pipeline bound.
        unsafe { d.cmd_dispatch_base(cb, 1, 0, 0, WORDS / 64 - 1, 1, 1) };
        Ok(())
    })?;
    sub.submit("compute", &[cb], None)?;
    let words = data.words();
    let ok = (0..WORDS as usize).all(|i| words[i] == i as u32 * 3 + if i < 64 { 9 } else { 7 });
    if !ok {
        eprintln!("utrace-workload: compute results wrong: {:?}", &words[..4]);
    }
    free(dev, &[cb]);
    fill.destroy(dev);
    based.destroy(dev);
    data.destroy(dev);
    indirect.destroy(dev);
    Ok(ok)
}

fn copy_region() -> vk::ImageCopy {
    vk::ImageCopy::default()
        .src_subresource(layers(vk::ImageAspectFlags::COLOR))
        .dst_subresource(layers(vk::ImageAspectFlags::COLOR))
        .extent(full_extent())
}

fn full_extent() -> vk::Extent3D {
    vk::Extent3D {
        width: SIZE,
        height: SIZE,
        depth: 1,
    }
}

fn buffer_image_region() -> vk::BufferImageCopy {
    vk::BufferImageCopy::default()
        .image_subresource(layers(vk::ImageAspectFlags::COLOR))
        .image_extent(full_extent())
}

fn blit_region() -> vk::ImageBlit {
    let corner = vk::Offset3D {
        x: SIZE as i32,
        y: SIZE as i32,
        z: 1,
    };
    vk::ImageBlit::default()
        .src_subresource(layers(vk::ImageAspectFlags::COLOR))
        .src_offsets([vk::Offset3D::default(), corner])
        .dst_subresource(layers(vk::ImageAspectFlags::COLOR))
        .dst_offsets([vk::Offset3D::default(), corner])
}

/// Every transfer command, v1 in one command buffer and the `2` variants (with a clear of
/// attachments inside a render pass) in another; the buffer round trip is checked.
pub fn transfers(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    use vk::ImageLayout as L;
    let d = &dev.device;
    let bytes = u64::from(SIZE * SIZE * 4);
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let src = Buffer::new(dev, bytes, usage)?;
    let dst = Buffer::new(dev, bytes, usage)?;
    let image_usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    let a = Image::new(dev, COLOR, image_usage, vk::SampleCountFlags::TYPE_1)?;
    let b = Image::new(
        dev,
        COLOR,
        image_usage | vk::ImageUsageFlags::COLOR_ATTACHMENT,
        vk::SampleCountFlags::TYPE_1,
    )?;
    let ms = Image::new(
        dev,
        COLOR,
        vk::ImageUsageFlags::TRANSFER_SRC
            | vk::ImageUsageFlags::TRANSFER_DST
            | vk::ImageUsageFlags::COLOR_ATTACHMENT,
        vk::SampleCountFlags::TYPE_4,
    )?;
    let depth = Image::new(
        dev,
        DEPTH,
        vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
        vk::SampleCountFlags::TYPE_1,
    )?;
    // SAFETY: the mapping covers `bytes`; no GPU work uses it yet.
    unsafe {
        for i in 0..bytes as usize {
            *src.mapped.add(i) = (i % 251) as u8;
        }
    }
    let color_aspect = vk::ImageAspectFlags::COLOR;
    let v1 = record_once(dev, |cb| {
        // SAFETY: `cb` is recording; every command below is ordered after the previous one
        // by a full barrier or a layout transition, and the images are in the layouts named.
        unsafe {
            d.cmd_copy_buffer(
                cb,
                src.buffer,
                dst.buffer,
                &[vk::BufferCopy::default().size(bytes)],
            );
            transition(
                dev,
                cb,
                a.image,
                color_aspect,
                L::UNDEFINED,
                L::TRANSFER_DST_OPTIMAL,
            );
            d.cmd_copy_buffer_to_image(
                cb,
                src.buffer,
                a.image,
                L::TRANSFER_DST_OPTIMAL,
                &[buffer_image_region()],
            );
            transition(
                dev,
                cb,
                a.image,
                color_aspect,
                L::TRANSFER_DST_OPTIMAL,
                L::TRANSFER_SRC_OPTIMAL,
            );
            transition(
                dev,
                cb,
                b.image,
                color_aspect,
                L::UNDEFINED,
                L::TRANSFER_DST_OPTIMAL,
            );
            d.cmd_copy_image(
                cb,
                a.image,
                L::TRANSFER_SRC_OPTIMAL,
                b.image,
                L::TRANSFER_DST_OPTIMAL,
                &[copy_region()],
            );
            full_barrier(dev, cb);
            d.cmd_blit_image(
                cb,
                a.image,
                L::TRANSFER_SRC_OPTIMAL,
                b.image,
                L::TRANSFER_DST_OPTIMAL,
                &[blit_region()],
                vk::Filter::LINEAR,
            );
            transition(
                dev,
                cb,
                ms.image,
                color_aspect,
                L::UNDEFINED,
                L::TRANSFER_DST_OPTIMAL,
            );
            let orange = vk::ClearColorValue {
                float32: [1.0, 0.5, 0.0, 1.0],
            };
            d.cmd_clear_color_image(
                cb,
                ms.image,
                L::TRANSFER_DST_OPTIMAL,
                &orange,
                &[range(color_aspect)],
            );
            transition(
                dev,
                cb,
                ms.image,
                color_aspect,
                L::TRANSFER_DST_OPTIMAL,
                L::TRANSFER_SRC_OPTIMAL,
            );
            let resolve = vk::ImageResolve::default()
                .src_subresource(layers(color_aspect))
                .dst_subresource(layers(color_aspect))
                .extent(full_extent());
            full_barrier(dev, cb);
            d.cmd_resolve_image(
                cb,
                ms.image,
                L::TRANSFER_SRC_OPTIMAL,
                b.image,
                L::TRANSFER_DST_OPTIMAL,
                &[resolve],
            );
            transition(
                dev,
                cb,
                depth.image,
                vk::ImageAspectFlags::DEPTH,
                L::UNDEFINED,
                L::TRANSFER_DST_OPTIMAL,
            );
            let far = vk::ClearDepthStencilValue {
                depth: 1.0,
                stencil: 0,
            };
            d.cmd_clear_depth_stencil_image(
                cb,
                depth.image,
                L::TRANSFER_DST_OPTIMAL,
                &far,
                &[range(vk::ImageAspectFlags::DEPTH)],
            );
            // The buffer round trip: back from image `a` (which holds `src`'s bytes).
            d.cmd_copy_image_to_buffer(
                cb,
                a.image,
                L::TRANSFER_SRC_OPTIMAL,
                dst.buffer,
                &[buffer_image_region()],
            );
            full_barrier(dev, cb);
            d.cmd_fill_buffer(cb, dst.buffer, bytes - 64, 64, 0xffff_ffff);
            full_barrier(dev, cb);
            d.cmd_update_buffer(cb, dst.buffer, bytes - 4, &[1, 2, 3, 4]);
        }
        Ok(())
    })?;
    sub.submit("transfers", &[v1], None)?;
    // SAFETY: the GPU work completed; both mappings cover `bytes`.
    let ok = unsafe {
        let s = std::slice::from_raw_parts(src.mapped, bytes as usize - 64);
        let t = std::slice::from_raw_parts(dst.mapped, bytes as usize);
        s == &t[..bytes as usize - 64]
            && t[bytes as usize - 8..bytes as usize - 4] == [0xff; 4]
            && t[bytes as usize - 4..] == [1, 2, 3, 4]
    };

    let pass = graphics::render_pass(dev, false)?;
    let fb = framebuffer(dev, pass, &[b.view])?;
    let clear_values = clears(false);
    let v2 = record_once(dev, |cb| {
        let regions = [vk::BufferCopy2::default().size(bytes)];
        let b2i = [vk::BufferImageCopy2::default()
            .image_subresource(layers(color_aspect))
            .image_extent(full_extent())];
        let i2i = [vk::ImageCopy2::default()
            .src_subresource(layers(color_aspect))
            .dst_subresource(layers(color_aspect))
            .extent(full_extent())];
        let corner = vk::Offset3D {
            x: SIZE as i32,
            y: SIZE as i32,
            z: 1,
        };
        let blit = [vk::ImageBlit2::default()
            .src_subresource(layers(color_aspect))
            .src_offsets([vk::Offset3D::default(), corner])
            .dst_subresource(layers(color_aspect))
            .dst_offsets([vk::Offset3D::default(), corner])];
        let resolve = [vk::ImageResolve2::default()
            .src_subresource(layers(color_aspect))
            .dst_subresource(layers(color_aspect))
            .extent(full_extent())];
        // SAFETY: as for the v1 command buffer; `a` and `ms` start in TRANSFER_SRC, `b` in
        // TRANSFER_DST, as the first command buffer left them.
        unsafe {
            d.cmd_copy_buffer2(
                cb,
                &vk::CopyBufferInfo2::default()
                    .src_buffer(src.buffer)
                    .dst_buffer(dst.buffer)
                    .regions(&regions),
            );
            full_barrier(dev, cb);
            transition(
                dev,
                cb,
                a.image,
                color_aspect,
                L::TRANSFER_SRC_OPTIMAL,
                L::TRANSFER_DST_OPTIMAL,
            );
            d.cmd_copy_buffer_to_image2(
                cb,
                &vk::CopyBufferToImageInfo2::default()
                    .src_buffer(src.buffer)
                    .dst_image(a.image)
                    .dst_image_layout(L::TRANSFER_DST_OPTIMAL)
                    .regions(&b2i),
            );
            transition(
                dev,
                cb,
                a.image,
                color_aspect,
                L::TRANSFER_DST_OPTIMAL,
                L::TRANSFER_SRC_OPTIMAL,
            );
            d.cmd_copy_image2(
                cb,
                &vk::CopyImageInfo2::default()
                    .src_image(a.image)
                    .src_image_layout(L::TRANSFER_SRC_OPTIMAL)
                    .dst_image(b.image)
                    .dst_image_layout(L::TRANSFER_DST_OPTIMAL)
                    .regions(&i2i),
            );
            full_barrier(dev, cb);
            d.cmd_blit_image2(
                cb,
                &vk::BlitImageInfo2::default()
                    .src_image(a.image)
                    .src_image_layout(L::TRANSFER_SRC_OPTIMAL)
                    .dst_image(b.image)
                    .dst_image_layout(L::TRANSFER_DST_OPTIMAL)
                    .regions(&blit)
                    .filter(vk::Filter::NEAREST),
            );
            full_barrier(dev, cb);
            d.cmd_resolve_image2(
                cb,
                &vk::ResolveImageInfo2::default()
                    .src_image(ms.image)
                    .src_image_layout(L::TRANSFER_SRC_OPTIMAL)
                    .dst_image(b.image)
                    .dst_image_layout(L::TRANSFER_DST_OPTIMAL)
                    .regions(&resolve),
            );
            d.cmd_copy_image_to_buffer2(
                cb,
                &vk::CopyImageToBufferInfo2::default()
                    .src_image(a.image)
                    .src_image_layout(L::TRANSFER_SRC_OPTIMAL)
                    .dst_buffer(dst.buffer)
                    .regions(&b2i),
            );
            full_barrier(dev, cb);
            let begin = vk::RenderPassBeginInfo::default()
                .render_pass(pass)
                .framebuffer(fb)
                .render_area(area())
                .clear_values(&clear_values);
            d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
            let attachment = vk::ClearAttachment {
                aspect_mask: color_aspect,
                color_attachment: 0,
                clear_value: clear_values[0],
            };
            let rect = vk::ClearRect {
                rect: area(),
                base_array_layer: 0,
                layer_count: 1,
            };
            d.cmd_clear_attachments(cb, &[attachment], &[rect]);
            d.cmd_end_render_pass(cb);
        }
        Ok(())
    })?;
    sub.submit("transfers2", &[v2], None)?;

    free(dev, &[v1, v2]);
    // SAFETY: no pending work uses these objects.
    unsafe {
        d.destroy_framebuffer(fb, None);
        d.destroy_render_pass(pass, None);
    }
    for i in [a, b, ms, depth] {
        i.destroy(dev);
    }
    src.destroy(dev);
    dst.destroy(dev);
    Ok(ok)
}

/// Labels nested three deep with a marker, a 1000-character label, a label that is not
/// UTF-8, and a label opened in one command buffer and closed in the next submission's; the
/// same with VK_EXT_debug_marker.
pub fn labels(
    inst: &Instance,
    dev: &Device,
    sub: &mut Submitter,
    features: &mut Vec<String>,
) -> Result<bool> {
    let d = &dev.device;
    let has_markers = dev.has_extension(ash::ext::debug_marker::NAME);
    let utils = ash::ext::debug_utils::Device::new(&inst.instance, d);
    let markers = ash::ext::debug_marker::Device::new(&inst.instance, d);
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
    )?;
    let fill = FillPipeline::new(dev, &data)?;
    let long = std::ffi::CString::new("x".repeat(1000)).map_err(|e| e.to_string())?;
    fn label(name: &std::ffi::CStr) -> vk::DebugUtilsLabelEXT<'_> {
        vk::DebugUtilsLabelEXT::default().label_name(name)
    }
    let not_utf8: &std::ffi::CStr = c"bad \xff\xfe label";
    let cb = record_once(dev, |cb| {
        // SAFETY: `cb` is recording; labels are balanced within it. VK_EXT_debug_marker is
        // deprecated in favour of debug utils, but applications still use it.
        #[allow(deprecated)]
        unsafe {
            utils.cmd_begin_debug_utils_label(cb, &label(c"frame"));
            utils.cmd_begin_debug_utils_label(cb, &label(c"shadow pass"));
            utils.cmd_begin_debug_utils_label(cb, &label(c"cascade 0"));
            fill.record(dev, cb, 1, WORDS);
            utils.cmd_end_debug_utils_label(cb);
            utils.cmd_insert_debug_utils_label(cb, &label(c"marker: after cascade"));
            utils.cmd_end_debug_utils_label(cb);
            utils.cmd_end_debug_utils_label(cb);
            full_barrier(dev, cb);
            utils.cmd_begin_debug_utils_label(cb, &label(&long));
            fill.record(dev, cb, 2, WORDS);
            utils.cmd_end_debug_utils_label(cb);
            full_barrier(dev, cb);
            utils.cmd_begin_debug_utils_label(cb, &label(not_utf8));
            d.cmd_fill_buffer(cb, data.buffer, 0, 64, 0);
            utils.cmd_end_debug_utils_label(cb);
            if has_markers {
                let marker = vk::DebugMarkerMarkerInfoEXT::default().marker_name(c"debug marker");
                markers.cmd_debug_marker_begin(cb, &marker);
                markers.cmd_debug_marker_insert(
                    cb,
                    &vk::DebugMarkerMarkerInfoEXT::default().marker_name(c"inserted marker"),
                );
                markers.cmd_debug_marker_end(cb);
            }
        }
        Ok(())
    })?;
    sub.submit("labels", &[cb], None)?;
    if has_markers {
        used(features, "debug_marker");
    }
    // A label that spans two submissions on the queue.
    let opens = record_once(dev, |cb| {
        // SAFETY: `cb` is recording; the label is closed by the next submission.
        unsafe {
            utils.cmd_begin_debug_utils_label(cb, &label(c"spans command buffers"));
            fill.record(dev, cb, 3, WORDS);
        }
        Ok(())
    })?;
    let closes = record_once(dev, |cb| {
        // SAFETY: closes the label the previous submission left open on this queue.
        unsafe {
            fill.record(dev, cb, 4, WORDS);
            utils.cmd_end_debug_utils_label(cb);
        }
        Ok(())
    })?;
    sub.submit("label-opens", &[opens], None)?;
    sub.submit("label-closes", &[closes], None)?;
    let ok = report(verify_fill(&data, 4, WORDS));
    free(dev, &[cb, opens, closes]);
    fill.destroy(dev);
    data.destroy(dev);
    Ok(ok)
}
