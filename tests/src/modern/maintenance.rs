//! The `maintenance` scenario: commands of VK_KHR_maintenance5 and VK_KHR_maintenance6
//! (core in Vulkan 1.4) that the layer does not trace, which must reach Lavapipe 25.0
//! untouched (no validation: 1.3.239 does not know them). One submission, "maintenance",
//! draws a quad into a 64x64 image with dynamic rendering: its index buffer bound by
//! vkCmdBindIndexBuffer2KHR (an offset and an explicit size), its colour in a uniform
//! buffer bound by vkCmdBindDescriptorSets2KHR, its place pushed by vkCmdPushConstants2KHR.
//! The host checks every pixel: the quad's colour inside the pushed rectangle, the clear
//! colour elsewhere.

use std::ffi::c_void;

use ash::vk;

use super::generated_commands::require_extensions;
use crate::gpu_work::graphics::{layers, transition, Image, COLOR, SIZE};
use crate::submitter::Submitter;
use crate::vk::{check, Buffer, Device, Extra, Instance, Result};

/// The quad's corner and size in pixels (`Push` of `maintenance.vert`).
const ORIGIN: [f32; 2] = [16.0, 24.0];
const QUAD: [f32; 2] = [24.0, 16.0];
/// The quad's colour (the uniform buffer) and what it becomes in R8G8B8A8_UNORM.
const QUAD_COLOR: [f32; 4] = [0.25, 0.5, 1.0, 1.0];
const QUAD_RGBA: [u8; 4] = [64, 128, 255, 255];
const CLEAR_RGBA: [u8; 4] = [0, 0, 0, 255];
/// Where the six indices start in the index buffer (the bytes before them are zero:
/// indices drawn from there would make nothing but degenerate triangles).
const INDEX_OFFSET: u64 = 16;
const INDICES: [u16; 6] = [0, 1, 2, 2, 1, 3];

pub fn device(inst: &Instance) -> Result<Device> {
    let physical = inst.physical_device()?;
    let extensions = [ash::khr::maintenance5::NAME, ash::khr::maintenance6::NAME];
    require_extensions(inst, physical, &extensions)?;
    let mut m6 = vk::PhysicalDeviceMaintenance6FeaturesKHR::default();
    let mut m5 = vk::PhysicalDeviceMaintenance5FeaturesKHR {
        p_next: &mut m6 as *mut _ as *mut c_void,
        ..Default::default()
    };
    let mut features = vk::PhysicalDeviceFeatures2 {
        p_next: &mut m5 as *mut _ as *mut c_void,
        ..Default::default()
    };
    // SAFETY: a live physical device with both extensions; the chain's structures live.
    unsafe {
        inst.instance
            .get_physical_device_features2(physical, &mut features)
    };
    if m5.maintenance5 != vk::TRUE || m6.maintenance6 != vk::TRUE {
        return Err("the device lacks the maintenance5 or maintenance6 feature".into());
    }
    let mut m6 = vk::PhysicalDeviceMaintenance6FeaturesKHR::default().maintenance6(true);
    let mut m5 = vk::PhysicalDeviceMaintenance5FeaturesKHR {
        p_next: &mut m6 as *mut _ as *mut c_void,
        maintenance5: vk::TRUE,
        ..Default::default()
    };
    let extra = Extra {
        next: &mut m5 as *mut _ as *mut c_void,
        ..Extra::default()
    };
    Device::new_with(inst, &extensions, true, extra)
}

pub fn run(inst: &Instance, dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let m5 = ash::khr::maintenance5::Device::new(&inst.instance, d);
    let m6 = ash::khr::maintenance6::Device::new(&inst.instance, d);
    let image = Image::new(
        dev,
        COLOR,
        vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
        vk::SampleCountFlags::TYPE_1,
    )?;
    let pixels = u64::from(SIZE * SIZE);
    let readback = Buffer::new(dev, pixels * 4, vk::BufferUsageFlags::TRANSFER_DST)?;
    let color = Buffer::new(dev, 16, vk::BufferUsageFlags::UNIFORM_BUFFER)?;
    let indices = Buffer::new(dev, 64, vk::BufferUsageFlags::INDEX_BUFFER)?;
    // SAFETY: both mappings are large enough; no GPU work uses the buffers yet.
    unsafe {
        std::ptr::copy_nonoverlapping(QUAD_COLOR.as_ptr(), color.mapped as *mut f32, 4);
        std::ptr::write_bytes(indices.mapped, 0, indices.size as usize);
        std::ptr::copy_nonoverlapping(
            INDICES.as_ptr(),
            indices.mapped.add(INDEX_OFFSET as usize) as *mut u16,
            INDICES.len(),
        );
    }
    let quad = Quad::new(dev, &color)?;
    super::name_object(inst, dev, quad.pipeline, c"maintenance quad")?;
    let push: Vec<u8> = ORIGIN
        .iter()
        .chain(&QUAD)
        .flat_map(|v| v.to_ne_bytes())
        .collect();

    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    let aspect = vk::ImageAspectFlags::COLOR;
    transition(
        dev,
        cb,
        image.image,
        aspect,
        vk::ImageLayout::UNDEFINED,
        vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
    );
    let attachments = [vk::RenderingAttachmentInfo::default()
        .image_view(image.view)
        .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .clear_value(vk::ClearValue {
            color: vk::ClearColorValue {
                float32: [0.0, 0.0, 0.0, 1.0],
            },
        })];
    let extent = vk::Extent2D {
        width: SIZE,
        height: SIZE,
    };
    let rendering = vk::RenderingInfo::default()
        .render_area(extent.into())
        .layer_count(1)
        .color_attachments(&attachments);
    let sets = [quad.set];
    let bind_sets = vk::BindDescriptorSetsInfoKHR::default()
        .stage_flags(vk::ShaderStageFlags::ALL_GRAPHICS)
        .layout(quad.layout)
        .descriptor_sets(&sets);
    let push_info = vk::PushConstantsInfoKHR::default()
        .layout(quad.layout)
        .stage_flags(vk::ShaderStageFlags::VERTEX)
        .values(&push);
    let viewport = vk::Viewport {
        x: 0.0,
        y: 0.0,
        width: SIZE as f32,
        height: SIZE as f32,
        min_depth: 0.0,
        max_depth: 1.0,
    };
    let index_bytes = std::mem::size_of_val(&INDICES) as u64;
    // SAFETY: `cb` is recording; dynamic rendering, maintenance5 and maintenance6 are
    // enabled; every handle belongs to this device; the index range lies in the buffer.
    unsafe {
        d.cmd_begin_rendering(cb, &rendering);
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, quad.pipeline);
        d.cmd_set_viewport(cb, 0, &[viewport]);
        d.cmd_set_scissor(cb, 0, &[extent.into()]);
        m5.cmd_bind_index_buffer2(
            cb,
            indices.buffer,
            INDEX_OFFSET,
            index_bytes,
            vk::IndexType::UINT16,
        );
        m6.cmd_bind_descriptor_sets2(cb, &bind_sets);
        m6.cmd_push_constants2(cb, &push_info);
        d.cmd_draw_indexed(cb, INDICES.len() as u32, 1, 0, 0, 0);
        d.cmd_end_rendering(cb);
    }
    transition(
        dev,
        cb,
        image.image,
        aspect,
        vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
    );
    let region = vk::BufferImageCopy::default()
        .image_subresource(layers(aspect))
        .image_extent(extent.into());
    let to_host = [vk::MemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::COPY)
        .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::HOST)
        .dst_access_mask(vk::AccessFlags2::HOST_READ)];
    // SAFETY: `cb` is recording; the image is in TRANSFER_SRC_OPTIMAL and the buffer holds
    // the whole image.
    unsafe {
        d.cmd_copy_image_to_buffer(
            cb,
            image.image,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            readback.buffer,
            &[region],
        );
        d.cmd_pipeline_barrier2(cb, &vk::DependencyInfo::default().memory_barriers(&to_host));
    }
    dev.end(cb)?;
    sub.submit("maintenance", &[cb], None)?;
    // SAFETY: the mapping holds the image's RGBA8 pixels; the submission completed.
    let rgba = unsafe { std::slice::from_raw_parts(readback.mapped, (pixels * 4) as usize) };
    let ok = verify(rgba)
        .map_err(|e| eprintln!("utrace-workload: maintenance: {e}"))
        .is_ok();

    // SAFETY: the submission was waited for.
    unsafe { d.free_command_buffers(dev.pool, &[cb]) };
    quad.destroy(dev);
    indices.destroy(dev);
    color.destroy(dev);
    readback.destroy(dev);
    image.destroy(dev);
    Ok(ok)
}

/// Every pixel: the quad's colour (±1 for the driver's rounding) where its centre lies in
/// the pushed rectangle, the clear colour elsewhere.
fn verify(rgba: &[u8]) -> Result<()> {
    for (i, px) in rgba.chunks_exact(4).enumerate() {
        let (x, y) = (
            (i as u32 % SIZE) as f32 + 0.5,
            (i as u32 / SIZE) as f32 + 0.5,
        );
        let inside = (ORIGIN[0]..ORIGIN[0] + QUAD[0]).contains(&x)
            && (ORIGIN[1]..ORIGIN[1] + QUAD[1]).contains(&y);
        let want = if inside { QUAD_RGBA } else { CLEAR_RGBA };
        if px.iter().zip(want).any(|(&g, w)| g.abs_diff(w) > 1) {
            return Err(format!("pixel ({x}, {y}) is {px:?}, expected {want:?}"));
        }
    }
    Ok(())
}

/// The pipeline of `maintenance.{vert,frag}` for dynamic rendering into one R8G8B8A8
/// attachment, and its descriptor set on the colour buffer.
struct Quad {
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
}

impl Quad {
    fn new(dev: &Device, color: &Buffer) -> Result<Quad> {
        let d = &dev.device;
        let read = |bytes: &[u8]| {
            ash::util::read_spv(&mut std::io::Cursor::new(bytes)).map_err(|e| e.to_string())
        };
        let vert = read(include_bytes!("../../../shaders/maintenance.vert.spv"))?;
        let frag = read(include_bytes!("../../../shaders/maintenance.frag.spv"))?;
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::FRAGMENT)];
        let push = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::VERTEX)
            .size(16)];
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::UNIFORM_BUFFER)
            .descriptor_count(1)];
        // SAFETY: valid create infos on a live device; the modules are destroyed once the
        // pipeline exists.
        unsafe {
            let module = |code: &[u32]| {
                check(
                    d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(code), None),
                    "vkCreateShaderModule",
                )
            };
            let (vert, frag) = (module(&vert)?, module(&frag)?);
            let set_layout = check(
                d.create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
                    None,
                ),
                "vkCreateDescriptorSetLayout",
            )?;
            let set_layouts = [set_layout];
            let layout = check(
                d.create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&set_layouts)
                        .push_constant_ranges(&push),
                    None,
                ),
                "vkCreatePipelineLayout",
            )?;
            let stages = [
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::VERTEX)
                    .module(vert)
                    .name(c"main"),
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::FRAGMENT)
                    .module(frag)
                    .name(c"main"),
            ];
            let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
            let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
                .topology(vk::PrimitiveTopology::TRIANGLE_LIST);
            let viewport = vk::PipelineViewportStateCreateInfo::default()
                .viewport_count(1)
                .scissor_count(1);
            let raster = vk::PipelineRasterizationStateCreateInfo::default()
                .polygon_mode(vk::PolygonMode::FILL)
                .cull_mode(vk::CullModeFlags::NONE)
                .line_width(1.0);
            let multisample = vk::PipelineMultisampleStateCreateInfo::default()
                .rasterization_samples(vk::SampleCountFlags::TYPE_1);
            let blend_attachments = [vk::PipelineColorBlendAttachmentState::default()
                .color_write_mask(vk::ColorComponentFlags::RGBA)];
            let blend =
                vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
            let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
            let dynamic =
                vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
            let formats = [COLOR];
            let mut rendering =
                vk::PipelineRenderingCreateInfo::default().color_attachment_formats(&formats);
            let info = vk::GraphicsPipelineCreateInfo::default()
                .stages(&stages)
                .vertex_input_state(&vertex_input)
                .input_assembly_state(&assembly)
                .viewport_state(&viewport)
                .rasterization_state(&raster)
                .multisample_state(&multisample)
                .color_blend_state(&blend)
                .dynamic_state(&dynamic)
                .layout(layout)
                .push_next(&mut rendering);
            let pipeline = d
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| format!("vkCreateGraphicsPipelines failed: {e}"))?[0];
            d.destroy_shader_module(vert, None);
            d.destroy_shader_module(frag, None);
            let pool = check(
                d.create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                ),
                "vkCreateDescriptorPool",
            )?;
            let set = check(
                d.allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(pool)
                        .set_layouts(&set_layouts),
                ),
                "vkAllocateDescriptorSets",
            )?[0];
            let buffer_info = [vk::DescriptorBufferInfo::default()
                .buffer(color.buffer)
                .range(vk::WHOLE_SIZE)];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                .buffer_info(&buffer_info);
            d.update_descriptor_sets(&[write], &[]);
            Ok(Quad {
                pipeline,
                layout,
                set_layout,
                pool,
                set,
            })
        }
    }

    fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses these objects.
        unsafe {
            let d = &dev.device;
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}
