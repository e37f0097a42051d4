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

use super::render_target::RenderTarget;
use crate::gpu_work::graphics::{self, Target};
use crate::submitter::Submitter;
use crate::vk::{check, Buffer, BufferSet, Device, Extra, Instance, Result};

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
    super::require_extensions(inst, physical, &extensions)?;
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
    let target = RenderTarget::cleared_to(dev, [0.0, 0.0, 0.0, 1.0])?;
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
    target.begin(dev, cb);
    let sets = [quad.buffers.set];
    let bind_sets = vk::BindDescriptorSetsInfoKHR::default()
        .stage_flags(vk::ShaderStageFlags::ALL_GRAPHICS)
        .layout(quad.layout)
        .descriptor_sets(&sets);
    let push_info = vk::PushConstantsInfoKHR::default()
        .layout(quad.layout)
        .stage_flags(vk::ShaderStageFlags::VERTEX)
        .values(&push);
    let index_bytes = std::mem::size_of_val(&INDICES) as u64;
    // SAFETY: `cb` is recording inside the render pass instance begun above; maintenance5
    // and maintenance6 are enabled; every handle belongs to this device; the index range
    // lies in the buffer.
    unsafe {
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, quad.pipeline);
        d.cmd_set_viewport(cb, 0, &[graphics::viewport()]);
        d.cmd_set_scissor(cb, 0, &[graphics::area()]);
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
    }
    target.end_and_copy(dev, cb);
    let to_host = [vk::MemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::COPY)
        .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::HOST)
        .dst_access_mask(vk::AccessFlags2::HOST_READ)];
    // SAFETY: `cb` is recording outside a render pass; synchronization2 is enabled.
    unsafe {
        d.cmd_pipeline_barrier2(cb, &vk::DependencyInfo::default().memory_barriers(&to_host))
    };
    dev.end(cb)?;
    sub.submit("maintenance", &[cb], None)?;
    // Every pixel: the quad's colour (within 1 for the driver's rounding) where its centre
    // lies in the pushed rectangle, the clear colour elsewhere.
    let ok = target.check_within("maintenance", 1, |x, y| {
        let (x, y) = (x as f32 + 0.5, y as f32 + 0.5);
        let inside = (ORIGIN[0]..ORIGIN[0] + QUAD[0]).contains(&x)
            && (ORIGIN[1]..ORIGIN[1] + QUAD[1]).contains(&y);
        Some(if inside { QUAD_RGBA } else { CLEAR_RGBA })
    });

    // SAFETY: the submission was waited for.
    unsafe { d.free_command_buffers(dev.pool, &[cb]) };
    quad.destroy(dev);
    indices.destroy(dev);
    color.destroy(dev);
    target.destroy(dev);
    Ok(ok)
}

/// The pipeline of `maintenance.{vert,frag}` for dynamic rendering into one R8G8B8A8
/// attachment, and its descriptor set on the colour buffer.
struct Quad {
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    buffers: BufferSet,
}

impl Quad {
    fn new(dev: &Device, color: &Buffer) -> Result<Quad> {
        let d = &dev.device;
        let buffers = BufferSet::new(
            dev,
            vk::DescriptorType::UNIFORM_BUFFER,
            vk::ShaderStageFlags::FRAGMENT,
            color,
        )?;
        let push = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::VERTEX)
            .size(16)];
        let set_layouts = [buffers.layout];
        let layout_info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(&set_layouts)
            .push_constant_ranges(&push);
        // SAFETY: a valid create info on a live device.
        let layout = check(
            unsafe { d.create_pipeline_layout(&layout_info, None) },
            "vkCreatePipelineLayout",
        )?;
        let shaders = [
            &include_bytes!("../../../shaders/maintenance.vert.spv")[..],
            &include_bytes!("../../../shaders/maintenance.frag.spv")[..],
        ];
        match graphics::graphics_pipeline(dev, layout, shaders, Target::Dynamic { depth: false }) {
            Ok(pipeline) => Ok(Quad {
                pipeline,
                layout,
                buffers,
            }),
            Err(e) => {
                // SAFETY: the layout is used by no pipeline.
                unsafe { d.destroy_pipeline_layout(layout, None) };
                buffers.destroy(dev);
                Err(e)
            }
        }
    }

    fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses these objects.
        unsafe {
            let d = &dev.device;
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
        }
        self.buffers.destroy(dev);
    }
}
