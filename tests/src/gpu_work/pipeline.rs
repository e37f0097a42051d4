//! The graphics pipelines the scenarios draw with: a vertex and a fragment shader, triangle
//! lists without vertex input, no culling, one sample, one color attachment (and a depth
//! one where the target has it) of a render pass subpass or of dynamic rendering, dynamic
//! viewport and scissor. [`Pipeline`] is the one of `shaders/triangle.{vert,frag}`.
//! (Re-exported by `graphics`, where the scenarios look for them.)

use ash::vk;

use super::graphics::{area, viewport, COLOR, DEPTH};
use crate::vk::{check, destroy_shader_modules, shader_modules, Device, Result};

/// What a pipeline renders into.
pub enum Target {
    Subpass {
        pass: vk::RenderPass,
        subpass: u32,
        depth: bool,
    },
    /// Dynamic rendering into a COLOR attachment and, if `depth`, a DEPTH one.
    Dynamic { depth: bool },
}

/// The pipeline of `shaders/triangle.{vert,frag}`, with an empty layout.
pub struct Pipeline {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
}

impl Pipeline {
    pub fn new(dev: &Device, target: Target) -> Result<Pipeline> {
        let vert = &include_bytes!("../../../shaders/triangle.vert.spv")[..];
        Self::with_vertex_shader(dev, target, vert)
    }

    /// The pipeline of `shaders/full_screen.vert` and `triangle.frag`: one triangle of 3
    /// vertices that covers the whole viewport.
    pub fn full_screen(dev: &Device, target: Target) -> Result<Pipeline> {
        let vert = &include_bytes!("../../../shaders/full_screen.vert.spv")[..];
        Self::with_vertex_shader(dev, target, vert)
    }

    fn with_vertex_shader(dev: &Device, target: Target, vert: &[u8]) -> Result<Pipeline> {
        let d = &dev.device;
        // SAFETY: a valid create info on a live device.
        let layout = check(
            unsafe { d.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default(), None) },
            "vkCreatePipelineLayout",
        )?;
        let shaders = [
            vert,
            &include_bytes!("../../../shaders/triangle.frag.spv")[..],
        ];
        match graphics_pipeline(dev, layout, shaders, target) {
            Ok(pipeline) => Ok(Pipeline { pipeline, layout }),
            Err(e) => {
                // SAFETY: the layout is used by no pipeline.
                unsafe { d.destroy_pipeline_layout(layout, None) };
                Err(e)
            }
        }
    }

    /// Binds the pipeline and sets the viewport and scissor to the whole image.
    pub fn bind(&self, dev: &Device, cb: vk::CommandBuffer) {
        // SAFETY: `cb` is recording inside a compatible render pass instance.
        unsafe {
            dev.device
                .cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
            dev.device.cmd_set_viewport(cb, 0, &[viewport()]);
            dev.device.cmd_set_scissor(cb, 0, &[area()]);
        }
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses the pipeline.
        unsafe {
            dev.device.destroy_pipeline(self.pipeline, None);
            dev.device.destroy_pipeline_layout(self.layout, None);
        }
    }
}

/// A pipeline of the vertex and fragment shaders in SPIR-V `[vert, frag]` (entry points
/// `main`) with `layout`, drawing into `target`. Depth testing (LESS_OR_EQUAL, writes on)
/// where the target has a depth attachment; the depth state is disabled elsewhere.
pub fn graphics_pipeline(
    dev: &Device,
    layout: vk::PipelineLayout,
    [vert, frag]: [&[u8]; 2],
    target: Target,
) -> Result<vk::Pipeline> {
    let modules = shader_modules(dev, &[vert, frag])?;
    let stages = [
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::VERTEX)
            .module(modules[0])
            .name(c"main"),
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::FRAGMENT)
            .module(modules[1])
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
    let has_depth = matches!(
        target,
        Target::Subpass { depth: true, .. } | Target::Dynamic { depth: true }
    );
    let depth = vk::PipelineDepthStencilStateCreateInfo::default()
        .depth_test_enable(has_depth)
        .depth_write_enable(has_depth)
        .depth_compare_op(vk::CompareOp::LESS_OR_EQUAL);
    let blend_attachments = [vk::PipelineColorBlendAttachmentState::default()
        .color_write_mask(vk::ColorComponentFlags::RGBA)];
    let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
    let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
    let color_formats = [COLOR];
    let mut rendering =
        vk::PipelineRenderingCreateInfo::default().color_attachment_formats(&color_formats);
    if has_depth {
        rendering = rendering.depth_attachment_format(DEPTH);
    }
    let mut info = vk::GraphicsPipelineCreateInfo::default()
        .stages(&stages)
        .vertex_input_state(&vertex_input)
        .input_assembly_state(&assembly)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .depth_stencil_state(&depth)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic)
        .layout(layout);
    match target {
        Target::Subpass { pass, subpass, .. } => info = info.render_pass(pass).subpass(subpass),
        Target::Dynamic { .. } => info = info.push_next(&mut rendering),
    }
    // SAFETY: valid create infos on a live device; the modules live until the call returns.
    let created = unsafe {
        dev.device
            .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
    };
    // The pipeline does not need its modules once created.
    destroy_shader_modules(dev, &modules);
    created
        .map(|p| p[0])
        .map_err(|(_, e)| format!("vkCreateGraphicsPipelines failed: {e}"))
}
