//! The `mesh` scenario: mesh shading (VK_EXT_mesh_shader). A graphics pipeline of task, mesh
//! and fragment shaders ("mesh triangles", `shaders/mesh.{task,mesh,frag}`) draws quads into
//! a 64x64 image with dynamic rendering, in one submission ("mesh"):
//! vkCmdDrawMeshTasksEXT(2, 1, 1) (two task workgroups, one quad each),
//! vkCmdDrawMeshTasksIndirectEXT reading {1, 1, 1} (a third quad) and, where the device has
//! drawIndirectCount, vkCmdDrawMeshTasksIndirectCountEXT with a count of 1 (a fourth quad).
//! A push constant numbers each draw's first quad, so every draw lands on its own rectangle
//! in its own color; the host checks every pixel of the image.

use ash::vk;

use super::render_target::{RenderTarget, CLEAR};
use crate::gpu_work::graphics::{self, COLOR};
use crate::submitter::Submitter;
use crate::vk::{
    check, destroy_shader_modules, shader_modules, Buffer, Device, Extra, Instance, Result,
};

/// The quads' pixel rectangles (x0, y0, x1, y1) and colors, as in `shaders/mesh.mesh`.
const RECTS: [[u32; 4]; 4] = [
    [4, 4, 28, 28],
    [36, 4, 60, 28],
    [4, 36, 28, 60],
    [36, 36, 60, 60],
];
const COLORS: [[u8; 4]; 4] = [
    [255, 0, 0, 255],
    [0, 255, 0, 255],
    [0, 0, 255, 255],
    [255, 255, 0, 255],
];

/// The size of VkDrawMeshTasksIndirectCommandEXT (three u32 group counts).
const COMMAND_SIZE: u32 = std::mem::size_of::<vk::DrawMeshTasksIndirectCommandEXT>() as u32;

/// A device with VK_EXT_mesh_shader's taskShader and meshShader (and maintenance4: the
/// shaders, compiled for Vulkan 1.3, declare their workgroup size with LocalSizeId).
pub fn device(inst: &Instance) -> Result<Device> {
    let name = ash::ext::mesh_shader::NAME;
    let physical = inst.physical_device()?;
    super::require_extensions(inst, physical, &[name])?;
    let mut supported = vk::PhysicalDeviceMeshShaderFeaturesEXT::default();
    let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut supported);
    // SAFETY: a live physical device that has the extension of the structure chained.
    unsafe {
        inst.instance
            .get_physical_device_features2(physical, &mut features)
    };
    if supported.task_shader != vk::TRUE || supported.mesh_shader != vk::TRUE {
        return Err("the device lacks VK_EXT_mesh_shader's taskShader or meshShader".into());
    }
    let mut mesh = vk::PhysicalDeviceMeshShaderFeaturesEXT::default()
        .task_shader(true)
        .mesh_shader(true);
    let extra = Extra {
        maintenance4: true,
        next: &mut mesh as *mut _ as *mut std::ffi::c_void,
        ..Extra::default()
    };
    Device::new_with(inst, &[name], true, extra)
}

/// What the submission uses, destroyed together however the run ends.
struct Objects {
    target: RenderTarget,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    /// One command {1, 1, 1}, read by both indirect draws.
    commands: Buffer,
    /// The draw count (1) of vkCmdDrawMeshTasksIndirectCountEXT.
    count: Buffer,
}

pub fn run(inst: &Instance, dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let (pipeline, layout) = pipeline(dev)?;
    let objects = Objects {
        target: RenderTarget::new(dev)?,
        pipeline,
        layout,
        commands: Buffer::new(
            dev,
            u64::from(COMMAND_SIZE),
            vk::BufferUsageFlags::INDIRECT_BUFFER,
        )?,
        count: Buffer::new(dev, 4, vk::BufferUsageFlags::INDIRECT_BUFFER)?,
    };
    write_words(&objects.commands, &[1, 1, 1]);
    write_words(&objects.count, &[1]);
    let result = draw(inst, dev, sub, &objects);
    // SAFETY: the submission completed (or never started); nothing else uses these.
    unsafe {
        dev.device.destroy_pipeline(objects.pipeline, None);
        dev.device.destroy_pipeline_layout(objects.layout, None);
    }
    objects.commands.destroy(dev);
    objects.count.destroy(dev);
    objects.target.destroy(dev);
    result
}

/// Names the pipeline, records and submits the draws, checks the image.
fn draw(inst: &Instance, dev: &Device, sub: &mut Submitter, o: &Objects) -> Result<bool> {
    let mesh = ash::ext::mesh_shader::Device::new(&inst.instance, &dev.device);
    super::name_object(inst, dev, o.pipeline, c"mesh triangles")?;
    let quads = if dev.draw_indirect_count { 4 } else { 3 };
    if !dev.draw_indirect_count {
        eprintln!(
            "utrace-workload: mesh: no drawIndirectCount, vkCmdDrawMeshTasksIndirectCountEXT \
             skipped"
        );
    }
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    o.target.begin(dev, cb);
    let first_quad = |first: u32| {
        // SAFETY: `cb` is recording; the layout's push range covers 4 bytes of the task stage.
        unsafe {
            dev.device.cmd_push_constants(
                cb,
                o.layout,
                vk::ShaderStageFlags::TASK_EXT,
                0,
                &first.to_ne_bytes(),
            )
        }
    };
    // SAFETY: `cb` is recording inside the render pass instance begun above; the pipeline
    // was made for its color format; the indirect buffers hold what the draws read and
    // INDIRECT_BUFFER usage; drawIndirectCount is enabled where it is used.
    unsafe {
        dev.device
            .cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, o.pipeline);
        first_quad(0);
        mesh.cmd_draw_mesh_tasks(cb, 2, 1, 1);
        first_quad(2);
        mesh.cmd_draw_mesh_tasks_indirect(cb, o.commands.buffer, 0, 1, COMMAND_SIZE);
        if dev.draw_indirect_count {
            first_quad(3);
            mesh.cmd_draw_mesh_tasks_indirect_count(
                cb,
                o.commands.buffer,
                0,
                o.count.buffer,
                0,
                1,
                COMMAND_SIZE,
            );
        }
    }
    o.target.finish(dev, cb);
    dev.end(cb)?;
    sub.submit("mesh", &[cb], None)?;
    // SAFETY: the submission completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &[cb]) };

    Ok(o.target.check("mesh", |x, y| {
        let inside = |r: &[u32; 4]| x >= r[0] && x < r[2] && y >= r[1] && y < r[3];
        let quad = (0..quads).find(|&q| inside(&RECTS[q]));
        Some(quad.map_or(CLEAR, |q| COLORS[q]))
    }))
}

/// Copies `words` to the start of a mapped buffer.
fn write_words(buffer: &Buffer, words: &[u32]) {
    let n = words.len().min(buffer.size as usize / 4);
    // SAFETY: the mapping covers `size` bytes, so n words, and the GPU does not use the
    // buffer yet.
    unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), buffer.mapped as *mut u32, n) };
}

/// The task + mesh + fragment pipeline for dynamic rendering into one COLOR attachment,
/// with a 4-byte push constant for the task shader (the draw's first quad).
fn pipeline(dev: &Device) -> Result<(vk::Pipeline, vk::PipelineLayout)> {
    let modules = shader_modules(
        dev,
        &[
            include_bytes!("../../../shaders/mesh.task.spv"),
            include_bytes!("../../../shaders/mesh.mesh.spv"),
            include_bytes!("../../../shaders/mesh.frag.spv"),
        ],
    )?;
    let stages = [
        vk::ShaderStageFlags::TASK_EXT,
        vk::ShaderStageFlags::MESH_EXT,
        vk::ShaderStageFlags::FRAGMENT,
    ];
    let result = pipeline_of(dev, &stages, &modules);
    destroy_shader_modules(dev, &modules);
    result
}

fn pipeline_of(
    dev: &Device,
    stages: &[vk::ShaderStageFlags],
    modules: &[vk::ShaderModule],
) -> Result<(vk::Pipeline, vk::PipelineLayout)> {
    let d = &dev.device;
    let push = [vk::PushConstantRange::default()
        .stage_flags(vk::ShaderStageFlags::TASK_EXT)
        .size(4)];
    let layout_info = vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&push);
    // SAFETY: a valid create info (the task stage is enabled).
    let layout = check(
        unsafe { d.create_pipeline_layout(&layout_info, None) },
        "vkCreatePipelineLayout",
    )?;
    let stage_infos: Vec<_> = stages
        .iter()
        .zip(modules)
        .map(|(&stage, &module)| {
            vk::PipelineShaderStageCreateInfo::default()
                .stage(stage)
                .module(module)
                .name(c"main")
        })
        .collect();
    let viewports = [graphics::viewport()];
    let scissors = [graphics::area()];
    let viewport = vk::PipelineViewportStateCreateInfo::default()
        .viewports(&viewports)
        .scissors(&scissors);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .line_width(1.0);
    let multisample = vk::PipelineMultisampleStateCreateInfo::default()
        .rasterization_samples(vk::SampleCountFlags::TYPE_1);
    let blend_attachments = [vk::PipelineColorBlendAttachmentState::default()
        .color_write_mask(vk::ColorComponentFlags::RGBA)];
    let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
    let color_formats = [COLOR];
    let mut rendering =
        vk::PipelineRenderingCreateInfo::default().color_attachment_formats(&color_formats);
    // Mesh pipelines have no vertex input or input assembly state.
    let info = vk::GraphicsPipelineCreateInfo::default()
        .stages(&stage_infos)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .color_blend_state(&blend)
        .layout(layout)
        .push_next(&mut rendering);
    // SAFETY: valid create infos; the modules live until the call returns.
    match unsafe { d.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) } {
        Ok(pipelines) => Ok((pipelines[0], layout)),
        Err((_, e)) => {
            // SAFETY: the layout is used by no pipeline.
            unsafe { d.destroy_pipeline_layout(layout, None) };
            Err(format!("vkCreateGraphicsPipelines failed: {e}"))
        }
    }
}
