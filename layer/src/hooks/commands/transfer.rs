//! Transfers: copies, blits, resolves, clears, fills and updates, v1 and `2` variants. Image
//! formats come from what the layer saw at `vkCreateImage`; sizes from the first region.

use ash::vk;
use ash::vk::Handle;

use super::bracketed;
use crate::hooks::slice;
use crate::trace::tracepoints::*;

fn extent(e: vk::Extent3D) -> (u32, u32) {
    (e.width, e.height)
}

/// The size of a blit's destination region.
fn blit_extent(offsets: [vk::Offset3D; 2]) -> (u32, u32) {
    (
        offsets[1].x.abs_diff(offsets[0].x),
        offsets[1].y.abs_diff(offsets[0].y),
    )
}

bracketed! {
    /// `vkCmdCopyBuffer`.
    cmd_copy_buffer(cb, src: vk::Buffer, dst: vk::Buffer, count: u32, p_regions: *const vk::BufferCopy) = core cmd_copy_buffer;
    switch toggle::COPY_BUFFER;
    before |r, t| {
        // SAFETY: the application passes `count` regions.
        let size = unsafe { slice(p_regions, count) }.iter().map(|c| c.size).sum();
        trace_start_copy_buffer(r, t, src.as_raw(), dst.as_raw(), count, size)
    };
    after |r, t| trace_end_copy_buffer(r, t);
}

bracketed! {
    /// `vkCmdCopyBuffer2` (and KHR).
    cmd_copy_buffer2(cb, p_info: *const vk::CopyBufferInfo2<'_>) = ext cmd_copy_buffer2;
    switch toggle::COPY_BUFFER;
    before |r, t| {
        // SAFETY: a valid info with `region_count` regions.
        let info = unsafe { &*p_info };
        // SAFETY: `p_regions` holds `region_count` regions (the info is valid).
        let regions = unsafe { slice(info.p_regions, info.region_count) };
        let size = regions.iter().map(|c| c.size).sum();
        trace_start_copy_buffer(r, t, info.src_buffer.as_raw(), info.dst_buffer.as_raw(), info.region_count, size)
    };
    after |r, t| trace_end_copy_buffer(r, t);
}

bracketed! {
    /// `vkCmdCopyImage`.
    cmd_copy_image(cb, src: vk::Image, src_layout: vk::ImageLayout, dst: vk::Image, dst_layout: vk::ImageLayout, count: u32, p_regions: *const vk::ImageCopy) = core cmd_copy_image;
    switch toggle::COPY_IMAGE;
    before |r, t| {
        // SAFETY: the application passes `count` regions.
        let (w, h) = unsafe { slice(p_regions, count) }.first().map_or((0, 0), |c| extent(c.extent));
        let (sf, df) = (r.objects.image(src).format, r.objects.image(dst).format);
        trace_start_copy_image(r, t, src.as_raw(), dst.as_raw(), count, w, h, sf, df)
    };
    after |r, t| trace_end_copy_image(r, t);
}

bracketed! {
    /// `vkCmdCopyImage2` (and KHR).
    cmd_copy_image2(cb, p_info: *const vk::CopyImageInfo2<'_>) = ext cmd_copy_image2;
    switch toggle::COPY_IMAGE;
    before |r, t| {
        // SAFETY: a valid info with `region_count` regions.
        let info = unsafe { &*p_info };
        // SAFETY: `p_regions` holds `region_count` regions (the info is valid).
        let (w, h) = unsafe { slice(info.p_regions, info.region_count) }.first().map_or((0, 0), |c| extent(c.extent));
        let (sf, df) = (r.objects.image(info.src_image).format, r.objects.image(info.dst_image).format);
        trace_start_copy_image(r, t, info.src_image.as_raw(), info.dst_image.as_raw(), info.region_count, w, h, sf, df)
    };
    after |r, t| trace_end_copy_image(r, t);
}

bracketed! {
    /// `vkCmdCopyBufferToImage`.
    cmd_copy_buffer_to_image(cb, src: vk::Buffer, dst: vk::Image, layout: vk::ImageLayout, count: u32, p_regions: *const vk::BufferImageCopy) = core cmd_copy_buffer_to_image;
    switch toggle::COPY_BUFFER_TO_IMAGE;
    before |r, t| {
        // SAFETY: the application passes `count` regions.
        let (w, h) = unsafe { slice(p_regions, count) }.first().map_or((0, 0), |c| extent(c.image_extent));
        let format = r.objects.image(dst).format;
        trace_start_copy_buffer_to_image(r, t, src.as_raw(), dst.as_raw(), count, w, h, format)
    };
    after |r, t| trace_end_copy_buffer_to_image(r, t);
}

bracketed! {
    /// `vkCmdCopyBufferToImage2` (and KHR).
    cmd_copy_buffer_to_image2(cb, p_info: *const vk::CopyBufferToImageInfo2<'_>) = ext cmd_copy_buffer_to_image2;
    switch toggle::COPY_BUFFER_TO_IMAGE;
    before |r, t| {
        // SAFETY: a valid info with `region_count` regions.
        let info = unsafe { &*p_info };
        // SAFETY: `p_regions` holds `region_count` regions (the info is valid).
        let (w, h) = unsafe { slice(info.p_regions, info.region_count) }.first().map_or((0, 0), |c| extent(c.image_extent));
        let format = r.objects.image(info.dst_image).format;
        trace_start_copy_buffer_to_image(r, t, info.src_buffer.as_raw(), info.dst_image.as_raw(), info.region_count, w, h, format)
    };
    after |r, t| trace_end_copy_buffer_to_image(r, t);
}

bracketed! {
    /// `vkCmdCopyImageToBuffer`.
    cmd_copy_image_to_buffer(cb, src: vk::Image, layout: vk::ImageLayout, dst: vk::Buffer, count: u32, p_regions: *const vk::BufferImageCopy) = core cmd_copy_image_to_buffer;
    switch toggle::COPY_IMAGE_TO_BUFFER;
    before |r, t| {
        // SAFETY: the application passes `count` regions.
        let (w, h) = unsafe { slice(p_regions, count) }.first().map_or((0, 0), |c| extent(c.image_extent));
        let format = r.objects.image(src).format;
        trace_start_copy_image_to_buffer(r, t, src.as_raw(), dst.as_raw(), count, w, h, format)
    };
    after |r, t| trace_end_copy_image_to_buffer(r, t);
}

bracketed! {
    /// `vkCmdCopyImageToBuffer2` (and KHR).
    cmd_copy_image_to_buffer2(cb, p_info: *const vk::CopyImageToBufferInfo2<'_>) = ext cmd_copy_image_to_buffer2;
    switch toggle::COPY_IMAGE_TO_BUFFER;
    before |r, t| {
        // SAFETY: a valid info with `region_count` regions.
        let info = unsafe { &*p_info };
        // SAFETY: `p_regions` holds `region_count` regions (the info is valid).
        let (w, h) = unsafe { slice(info.p_regions, info.region_count) }.first().map_or((0, 0), |c| extent(c.image_extent));
        let format = r.objects.image(info.src_image).format;
        trace_start_copy_image_to_buffer(r, t, info.src_image.as_raw(), info.dst_buffer.as_raw(), info.region_count, w, h, format)
    };
    after |r, t| trace_end_copy_image_to_buffer(r, t);
}

bracketed! {
    /// `vkCmdBlitImage`.
    cmd_blit_image(cb, src: vk::Image, src_layout: vk::ImageLayout, dst: vk::Image, dst_layout: vk::ImageLayout, count: u32, p_regions: *const vk::ImageBlit, filter: vk::Filter) = core cmd_blit_image;
    switch toggle::BLIT_IMAGE;
    before |r, t| {
        // SAFETY: the application passes `count` regions.
        let (w, h) = unsafe { slice(p_regions, count) }.first().map_or((0, 0), |b| blit_extent(b.dst_offsets));
        let (sf, df) = (r.objects.image(src).format, r.objects.image(dst).format);
        trace_start_blit_image(r, t, src.as_raw(), dst.as_raw(), count, w, h, sf, df, filter)
    };
    after |r, t| trace_end_blit_image(r, t);
}

bracketed! {
    /// `vkCmdBlitImage2` (and KHR).
    cmd_blit_image2(cb, p_info: *const vk::BlitImageInfo2<'_>) = ext cmd_blit_image2;
    switch toggle::BLIT_IMAGE;
    before |r, t| {
        // SAFETY: a valid info with `region_count` regions.
        let info = unsafe { &*p_info };
        // SAFETY: `p_regions` holds `region_count` regions (the info is valid).
        let (w, h) = unsafe { slice(info.p_regions, info.region_count) }.first().map_or((0, 0), |b| blit_extent(b.dst_offsets));
        let (sf, df) = (r.objects.image(info.src_image).format, r.objects.image(info.dst_image).format);
        trace_start_blit_image(r, t, info.src_image.as_raw(), info.dst_image.as_raw(), info.region_count, w, h, sf, df, info.filter)
    };
    after |r, t| trace_end_blit_image(r, t);
}

bracketed! {
    /// `vkCmdResolveImage`.
    cmd_resolve_image(cb, src: vk::Image, src_layout: vk::ImageLayout, dst: vk::Image, dst_layout: vk::ImageLayout, count: u32, p_regions: *const vk::ImageResolve) = core cmd_resolve_image;
    switch toggle::RESOLVE_IMAGE;
    before |r, t| {
        // SAFETY: the application passes `count` regions.
        let (w, h) = unsafe { slice(p_regions, count) }.first().map_or((0, 0), |c| extent(c.extent));
        let image = r.objects.image(src);
        trace_start_resolve_image(r, t, src.as_raw(), dst.as_raw(), count, w, h, image.format, image.samples)
    };
    after |r, t| trace_end_resolve_image(r, t);
}

bracketed! {
    /// `vkCmdResolveImage2` (and KHR).
    cmd_resolve_image2(cb, p_info: *const vk::ResolveImageInfo2<'_>) = ext cmd_resolve_image2;
    switch toggle::RESOLVE_IMAGE;
    before |r, t| {
        // SAFETY: a valid info with `region_count` regions.
        let info = unsafe { &*p_info };
        // SAFETY: `p_regions` holds `region_count` regions (the info is valid).
        let (w, h) = unsafe { slice(info.p_regions, info.region_count) }.first().map_or((0, 0), |c| extent(c.extent));
        let image = r.objects.image(info.src_image);
        trace_start_resolve_image(r, t, info.src_image.as_raw(), info.dst_image.as_raw(), info.region_count, w, h, image.format, image.samples)
    };
    after |r, t| trace_end_resolve_image(r, t);
}

bracketed! {
    /// `vkCmdClearColorImage`.
    cmd_clear_color_image(cb, image: vk::Image, layout: vk::ImageLayout, p_color: *const vk::ClearColorValue, count: u32, p_ranges: *const vk::ImageSubresourceRange) = core cmd_clear_color_image;
    switch toggle::CLEAR_COLOR_IMAGE;
    before |r, t| {
        let format = r.objects.image(image).format;
        trace_start_clear_color_image(r, t, image.as_raw(), count, format)
    };
    after |r, t| trace_end_clear_color_image(r, t);
}

bracketed! {
    /// `vkCmdClearDepthStencilImage`.
    cmd_clear_depth_stencil_image(cb, image: vk::Image, layout: vk::ImageLayout, p_value: *const vk::ClearDepthStencilValue, count: u32, p_ranges: *const vk::ImageSubresourceRange) = core cmd_clear_depth_stencil_image;
    switch toggle::CLEAR_DEPTH_STENCIL_IMAGE;
    before |r, t| {
        let format = r.objects.image(image).format;
        trace_start_clear_depth_stencil_image(r, t, image.as_raw(), count, format)
    };
    after |r, t| trace_end_clear_depth_stencil_image(r, t);
}

bracketed! {
    /// `vkCmdClearAttachments` (inside a render pass).
    cmd_clear_attachments(cb, count: u32, p_attachments: *const vk::ClearAttachment, rect_count: u32, p_rects: *const vk::ClearRect) = core cmd_clear_attachments;
    switch toggle::CLEAR_ATTACHMENTS;
    before |r, t| trace_start_clear_attachments(r, t, count, rect_count);
    after |r, t| trace_end_clear_attachments(r, t);
}

bracketed! {
    /// `vkCmdFillBuffer`.
    cmd_fill_buffer(cb, dst: vk::Buffer, offset: u64, size: u64, data: u32) = core cmd_fill_buffer;
    switch toggle::FILL_BUFFER;
    before |r, t| trace_start_fill_buffer(r, t, dst.as_raw(), offset, size);
    after |r, t| trace_end_fill_buffer(r, t);
}

bracketed! {
    /// `vkCmdUpdateBuffer`.
    cmd_update_buffer(cb, dst: vk::Buffer, offset: u64, size: u64, p_data: *const std::ffi::c_void) = core cmd_update_buffer;
    switch toggle::UPDATE_BUFFER;
    before |r, t| trace_start_update_buffer(r, t, dst.as_raw(), offset, size);
    after |r, t| trace_end_update_buffer(r, t);
}
