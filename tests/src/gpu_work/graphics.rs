//! Graphics objects for the scenarios: images (and the copy of a whole one into a buffer),
//! classic render passes (one subpass with color and depth; two subpasses through
//! vkCreateRenderPass2), framebuffers, the whole-image viewport and area, and (from
//! `pipeline.rs`) the pipelines of a vertex and a fragment shader, such as the one of
//! `shaders/triangle.{vert,frag}`, for a render pass subpass or for dynamic rendering.

use ash::vk;

pub use super::pipeline::{graphics_pipeline, Pipeline, Target};
use crate::vk::{check, Device, Result};

pub const SIZE: u32 = 64;
pub const COLOR: vk::Format = vk::Format::R8G8B8A8_UNORM;
pub const DEPTH: vk::Format = vk::Format::D32_SFLOAT;

pub struct Image {
    pub image: vk::Image,
    memory: vk::DeviceMemory,
    pub view: vk::ImageView,
}

impl Image {
    pub fn new(
        dev: &Device,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        samples: vk::SampleCountFlags,
    ) -> Result<Image> {
        Self::create(dev, format, usage, samples, 1)
    }

    /// A color attachment with `layers` array layers and a 2D-array view of them all (for
    /// multiview).
    pub fn layered(dev: &Device, format: vk::Format, layers: u32) -> Result<Image> {
        Self::create(
            dev,
            format,
            vk::ImageUsageFlags::COLOR_ATTACHMENT,
            vk::SampleCountFlags::TYPE_1,
            layers,
        )
    }

    fn create(
        dev: &Device,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        samples: vk::SampleCountFlags,
        layers: u32,
    ) -> Result<Image> {
        let d = &dev.device;
        let aspect = if format == DEPTH {
            vk::ImageAspectFlags::DEPTH
        } else {
            vk::ImageAspectFlags::COLOR
        };
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D {
                width: SIZE,
                height: SIZE,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(layers)
            .samples(samples)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid create infos; memory of a type the image allows, bound once.
        unsafe {
            let image = check(d.create_image(&info, None), "vkCreateImage")?;
            let reqs = d.get_image_memory_requirements(image);
            let type_index =
                dev.memory_type(reqs.memory_type_bits, vk::MemoryPropertyFlags::empty())?;
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(reqs.size)
                .memory_type_index(type_index);
            let memory = check(d.allocate_memory(&alloc, None), "vkAllocateMemory")?;
            check(d.bind_image_memory(image, memory, 0), "vkBindImageMemory")?;
            // Only images drawn into get a view (a view needs a usage that reads or writes
            // through one).
            let attachment = vk::ImageUsageFlags::COLOR_ATTACHMENT
                | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT;
            let view = if usage.intersects(attachment) {
                let view_type = if layers > 1 {
                    vk::ImageViewType::TYPE_2D_ARRAY
                } else {
                    vk::ImageViewType::TYPE_2D
                };
                let view_info = vk::ImageViewCreateInfo::default()
                    .image(image)
                    .view_type(view_type)
                    .format(format)
                    .subresource_range(range(aspect).layer_count(layers));
                check(d.create_image_view(&view_info, None), "vkCreateImageView")?
            } else {
                vk::ImageView::null()
            };
            Ok(Image {
                image,
                memory,
                view,
            })
        }
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses the image.
        unsafe {
            dev.device.destroy_image_view(self.view, None);
            dev.device.destroy_image(self.image, None);
            dev.device.free_memory(self.memory, None);
        }
    }
}

pub fn range(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default()
        .aspect_mask(aspect)
        .level_count(1)
        .layer_count(1)
}

pub fn layers(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers::default()
        .aspect_mask(aspect)
        .layer_count(1)
}

/// An image layout transition with a full memory dependency between the given stages.
pub fn transition(
    dev: &Device,
    cb: vk::CommandBuffer,
    image: vk::Image,
    aspect: vk::ImageAspectFlags,
    from: vk::ImageLayout,
    to: vk::ImageLayout,
) {
    let barrier = vk::ImageMemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
        .src_access_mask(vk::AccessFlags2::MEMORY_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
        .dst_access_mask(vk::AccessFlags2::MEMORY_READ | vk::AccessFlags2::MEMORY_WRITE)
        .old_layout(from)
        .new_layout(to)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(range(aspect));
    let barriers = [barrier];
    let info = vk::DependencyInfo::default().image_memory_barriers(&barriers);
    // SAFETY: `cb` is recording; synchronization2 is enabled.
    unsafe { dev.device.cmd_pipeline_barrier2(cb, &info) };
}

/// Records the copy of the whole color `image`, in TRANSFER_SRC_OPTIMAL, into `buffer`
/// (which must hold SIZE * SIZE tightly packed pixels).
pub fn copy_to_buffer(dev: &Device, cb: vk::CommandBuffer, image: vk::Image, buffer: vk::Buffer) {
    let region = vk::BufferImageCopy::default()
        .image_subresource(layers(vk::ImageAspectFlags::COLOR))
        .image_extent(vk::Extent3D {
            width: SIZE,
            height: SIZE,
            depth: 1,
        });
    let layout = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
    // SAFETY: `cb` is recording outside a render pass; the caller gives an image in that
    // layout and a buffer large enough, both of this device.
    unsafe {
        dev.device
            .cmd_copy_image_to_buffer(cb, image, layout, buffer, &[region])
    };
}

/// A full memory barrier, so that each transfer sees the previous one's writes.
pub fn full_barrier(dev: &Device, cb: vk::CommandBuffer) {
    let barrier = vk::MemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
        .src_access_mask(vk::AccessFlags2::MEMORY_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
        .dst_access_mask(vk::AccessFlags2::MEMORY_READ | vk::AccessFlags2::MEMORY_WRITE);
    let barriers = [barrier];
    let info = vk::DependencyInfo::default().memory_barriers(&barriers);
    // SAFETY: `cb` is recording; synchronization2 is enabled.
    unsafe { dev.device.cmd_pipeline_barrier2(cb, &info) };
}

/// A render pass with a color (cleared, stored, ends TRANSFER_SRC) and, if `depth`, a depth
/// attachment, one subpass.
pub fn render_pass(dev: &Device, depth: bool) -> Result<vk::RenderPass> {
    let mut attachments = vec![vk::AttachmentDescription::default()
        .format(COLOR)
        .samples(vk::SampleCountFlags::TYPE_1)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
        .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
        .initial_layout(vk::ImageLayout::UNDEFINED)
        .final_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)];
    if depth {
        attachments.push(
            vk::AttachmentDescription::default()
                .format(DEPTH)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::DONT_CARE)
                .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                .initial_layout(vk::ImageLayout::UNDEFINED)
                .final_layout(vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL),
        );
    }
    let color_ref = [vk::AttachmentReference::default()
        .attachment(0)
        .layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)];
    let depth_ref = vk::AttachmentReference::default()
        .attachment(1)
        .layout(vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
    let mut subpass = vk::SubpassDescription::default()
        .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
        .color_attachments(&color_ref);
    if depth {
        subpass = subpass.depth_stencil_attachment(&depth_ref);
    }
    let subpasses = [subpass];
    // Earlier writes to the attachments come before the render pass's layout transition;
    // attachment writes are made visible to the transfers that follow the render pass.
    let dependencies = [
        vk::SubpassDependency::default()
            .src_subpass(vk::SUBPASS_EXTERNAL)
            .dst_subpass(0)
            .src_stage_mask(vk::PipelineStageFlags::ALL_COMMANDS)
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_stage_mask(
                vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT
                    | vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS,
            )
            .dst_access_mask(
                vk::AccessFlags::COLOR_ATTACHMENT_WRITE
                    | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE,
            ),
        vk::SubpassDependency::default()
            .src_subpass(0)
            .dst_subpass(vk::SUBPASS_EXTERNAL)
            .src_stage_mask(
                vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT
                    | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS,
            )
            .src_access_mask(
                vk::AccessFlags::COLOR_ATTACHMENT_WRITE
                    | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE,
            )
            .dst_stage_mask(vk::PipelineStageFlags::TRANSFER)
            .dst_access_mask(vk::AccessFlags::TRANSFER_READ),
    ];
    let info = vk::RenderPassCreateInfo::default()
        .attachments(&attachments)
        .subpasses(&subpasses)
        .dependencies(&dependencies);
    // SAFETY: a valid create info.
    check(
        unsafe { dev.device.create_render_pass(&info, None) },
        "vkCreateRenderPass",
    )
}

/// A render pass made with vkCreateRenderPass2: one color attachment drawn in two subpasses.
pub fn render_pass2_two_subpasses(dev: &Device) -> Result<vk::RenderPass> {
    let attachments = [vk::AttachmentDescription2::default()
        .format(COLOR)
        .samples(vk::SampleCountFlags::TYPE_1)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
        .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
        .initial_layout(vk::ImageLayout::UNDEFINED)
        .final_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)];
    let color_ref = [vk::AttachmentReference2::default()
        .attachment(0)
        .layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
        .aspect_mask(vk::ImageAspectFlags::COLOR)];
    let subpasses = [
        vk::SubpassDescription2::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&color_ref),
        vk::SubpassDescription2::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&color_ref),
    ];
    let dependencies = [
        vk::SubpassDependency2::default()
            .src_subpass(0)
            .dst_subpass(1)
            .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
            .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
            .dst_access_mask(
                vk::AccessFlags::COLOR_ATTACHMENT_WRITE | vk::AccessFlags::COLOR_ATTACHMENT_READ,
            ),
        vk::SubpassDependency2::default()
            .src_subpass(1)
            .dst_subpass(vk::SUBPASS_EXTERNAL)
            .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
            .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags::TRANSFER)
            .dst_access_mask(vk::AccessFlags::TRANSFER_READ),
    ];
    let info = vk::RenderPassCreateInfo2::default()
        .attachments(&attachments)
        .subpasses(&subpasses)
        .dependencies(&dependencies);
    // SAFETY: a valid create info (render pass 2 is core 1.2).
    check(
        unsafe { dev.device.create_render_pass2(&info, None) },
        "vkCreateRenderPass2",
    )
}

pub fn framebuffer(
    dev: &Device,
    pass: vk::RenderPass,
    views: &[vk::ImageView],
) -> Result<vk::Framebuffer> {
    let info = vk::FramebufferCreateInfo::default()
        .render_pass(pass)
        .attachments(views)
        .width(SIZE)
        .height(SIZE)
        .layers(1);
    // SAFETY: views match the render pass's attachments.
    check(
        unsafe { dev.device.create_framebuffer(&info, None) },
        "vkCreateFramebuffer",
    )
}

/// The clear values of a color (and depth) attachment.
pub fn clears(depth: bool) -> Vec<vk::ClearValue> {
    let mut v = vec![vk::ClearValue {
        color: vk::ClearColorValue {
            float32: [0.0, 0.0, 0.0, 1.0],
        },
    }];
    if depth {
        v.push(vk::ClearValue {
            depth_stencil: vk::ClearDepthStencilValue {
                depth: 1.0,
                stencil: 0,
            },
        });
    }
    v
}

/// The scissor (render area) covering the whole image.
pub fn area() -> vk::Rect2D {
    vk::Rect2D::default().extent(vk::Extent2D {
        width: SIZE,
        height: SIZE,
    })
}

/// The viewport covering the whole image.
pub fn viewport() -> vk::Viewport {
    vk::Viewport {
        x: 0.0,
        y: 0.0,
        width: SIZE as f32,
        height: SIZE as f32,
        min_depth: 0.0,
        max_depth: 1.0,
    }
}

/// A one-subpass render pass over one color attachment, multiview with `view_mask`.
pub fn multiview_render_pass(dev: &Device, view_mask: u32) -> Result<vk::RenderPass> {
    let attachments = [vk::AttachmentDescription::default()
        .format(COLOR)
        .samples(vk::SampleCountFlags::TYPE_1)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
        .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
        .initial_layout(vk::ImageLayout::UNDEFINED)
        .final_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)];
    let color_ref = [vk::AttachmentReference::default()
        .attachment(0)
        .layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)];
    let subpasses = [vk::SubpassDescription::default()
        .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
        .color_attachments(&color_ref)];
    let masks = [view_mask];
    let mut multiview = vk::RenderPassMultiviewCreateInfo::default()
        .view_masks(&masks)
        .correlation_masks(&masks);
    let info = vk::RenderPassCreateInfo::default()
        .attachments(&attachments)
        .subpasses(&subpasses)
        .push_next(&mut multiview);
    // SAFETY: a valid create info; multiview is enabled on the device.
    check(
        unsafe { dev.device.create_render_pass(&info, None) },
        "vkCreateRenderPass",
    )
}
