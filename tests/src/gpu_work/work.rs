//! Transfers: every copy, blit, fill, update and clear command, on buffers and images.

use ash::vk;

use super::graphics::{
    self, area, clears, framebuffer, full_barrier, layers, range, transition, Image, COLOR, DEPTH,
    SIZE,
};
use super::{free, record_once};
use crate::submitter::Submitter;
use crate::vk::{Buffer, Device, Result};

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
