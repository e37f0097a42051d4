//! The `shader_objects` scenario: VK_EXT_shader_object. vkCreateShadersEXT makes a vertex
//! and a fragment shader object ("triangle vs", "triangle fs",
//! `shaders/shader_objects.{vert,frag}`) and a compute one ("fill cs", `shaders/fill.comp`).
//! One submission ("shader objects") binds vs + fs with vkCmdBindShadersEXT, sets every
//! dynamic state drawing with shader objects needs, draws two triangles (vkCmdDraw(3, 1, 0,
//! 0) twice, placed and colored by push constants) into a 64x64 image with dynamic
//! rendering, then binds the compute shader object and dispatches (4, 1, 1) workgroups that
//! write `data[i] = i * 3 + base` into a storage buffer. The host checks every pixel and word.

use ash::vk;
use ash::vk::Handle;

use super::render_target::{host_barrier, RenderTarget, CLEAR};
use crate::gpu_work::graphics;
use crate::submitter::Submitter;
use crate::vk::{
    check, spirv, verify_fill, Buffer, BufferSet, Device, Extra, Instance, Result, FILL_GROUP,
};

/// The triangles' right-angle corners (pixels) and colors; their legs are [`LEG`] pixels
/// long, as in `shaders/shader_objects.vert`.
const TRIANGLES: [([f32; 2], [f32; 4]); 2] = [
    ([4.0, 4.0], [1.0, 0.0, 1.0, 1.0]),
    ([36.0, 36.0], [0.0, 1.0, 1.0, 1.0]),
];
const LEG: f32 = 24.5;
/// The push block of both graphics shaders: vec4 color, vec2 offset.
const PUSH_SIZE: u32 = 24;

/// Workgroups dispatched, and the words of `fill.comp` they write.
const GROUPS: u32 = 4;
const WORDS: u32 = GROUPS * FILL_GROUP;
const BASE: u32 = 7000;

/// A device with VK_EXT_shader_object's shaderObject feature.
pub fn device(inst: &Instance) -> Result<Device> {
    let name = ash::ext::shader_object::NAME;
    let physical = inst.physical_device()?;
    super::require_extensions(inst, physical, &[name])?;
    let mut supported = vk::PhysicalDeviceShaderObjectFeaturesEXT::default();
    let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut supported);
    // SAFETY: a live physical device that has the extension of the structure chained.
    unsafe {
        inst.instance
            .get_physical_device_features2(physical, &mut features)
    };
    if supported.shader_object != vk::TRUE {
        return Err("the device lacks VK_EXT_shader_object's shaderObject".into());
    }
    let mut shader_object =
        vk::PhysicalDeviceShaderObjectFeaturesEXT::default().shader_object(true);
    let extra = Extra {
        next: &mut shader_object as *mut _ as *mut std::ffi::c_void,
        ..Extra::default()
    };
    Device::new_with(inst, &[name], true, extra)
}

/// The shader objects and what binding them needs: a pipeline layout per bind point (for
/// vkCmdPushConstants and vkCmdBindDescriptorSets), the compute shader's descriptor set.
struct Objects {
    vs: vk::ShaderEXT,
    fs: vk::ShaderEXT,
    cs: vk::ShaderEXT,
    graphics_layout: vk::PipelineLayout,
    compute_layout: vk::PipelineLayout,
    /// The storage buffer `fill.comp` writes.
    buffers: BufferSet,
}

pub fn run(inst: &Instance, dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let so = ash::ext::shader_object::Device::new(&inst.instance, &dev.device);
    let target = RenderTarget::new(dev)?;
    let data = Buffer::new(
        dev,
        u64::from(WORDS * 4),
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    // A value fill.comp never writes, so a word left alone shows.
    // SAFETY: the mapping covers the buffer's bytes; the GPU does not use it yet.
    unsafe { std::ptr::write_bytes(data.mapped, 0xff, data.size as usize) };
    let objects = objects(dev, &so, &data)?;
    let result = draw(inst, dev, sub, &so, &objects, &target, &data);
    destroy(dev, &so, objects);
    data.destroy(dev);
    target.destroy(dev);
    result
}

/// Names the shader objects, records and submits the draws and the dispatch, checks the
/// image and the buffer.
fn draw(
    inst: &Instance,
    dev: &Device,
    sub: &mut Submitter,
    so: &ash::ext::shader_object::Device,
    objects: &Objects,
    target: &RenderTarget,
    data: &Buffer,
) -> Result<bool> {
    super::name_object(inst, dev, objects.vs, c"triangle vs")?;
    super::name_object(inst, dev, objects.fs, c"triangle fs")?;
    super::name_object(inst, dev, objects.cs, c"fill cs")?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    target.begin(dev, cb);
    // Vertex and fragment bound; tessellation and geometry explicitly unbound (their
    // features are not enabled on this device, so NULL is all they may hold). Task and
    // mesh stages exist only with VK_EXT_mesh_shader, not enabled here.
    let stages = [
        vk::ShaderStageFlags::VERTEX,
        vk::ShaderStageFlags::TESSELLATION_CONTROL,
        vk::ShaderStageFlags::TESSELLATION_EVALUATION,
        vk::ShaderStageFlags::GEOMETRY,
        vk::ShaderStageFlags::FRAGMENT,
    ];
    let null = vk::ShaderEXT::null();
    let shaders = [objects.vs, null, null, null, objects.fs];
    // SAFETY: `cb` is recording inside the render pass instance begun above; the shaders
    // were created for the stages they are bound to, shaderObject is enabled.
    unsafe { so.cmd_bind_shaders(cb, &stages, &shaders) };
    set_state(dev, so, cb);
    for (offset, color) in TRIANGLES {
        let push: Vec<u8> = color
            .iter()
            .chain(&offset)
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        // SAFETY: every state the draw needs is set; the push range of the layout matches
        // the one both shaders were created with.
        unsafe {
            dev.device.cmd_push_constants(
                cb,
                objects.graphics_layout,
                vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
                0,
                &push,
            );
            dev.device.cmd_draw(cb, 3, 1, 0, 0);
        }
    }
    target.finish(dev, cb);
    let push = [BASE.to_ne_bytes(), WORDS.to_ne_bytes()].concat();
    // SAFETY: `cb` is recording outside a render pass; the set matches the compute
    // shader's set layout and the push range its layout.
    unsafe {
        so.cmd_bind_shaders(cb, &[vk::ShaderStageFlags::COMPUTE], &[objects.cs]);
        dev.device.cmd_bind_descriptor_sets(
            cb,
            vk::PipelineBindPoint::COMPUTE,
            objects.compute_layout,
            0,
            &[objects.buffers.set],
            &[],
        );
        dev.device.cmd_push_constants(
            cb,
            objects.compute_layout,
            vk::ShaderStageFlags::COMPUTE,
            0,
            &push,
        );
        dev.device.cmd_dispatch(cb, GROUPS, 1, 1);
    }
    host_barrier(dev, cb);
    dev.end(cb)?;
    sub.submit("shader objects", &[cb], None)?;
    // SAFETY: the submission completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &[cb]) };

    let pixels_ok = target.check("shader_objects", |x, y| {
        let (cx, cy) = (x as f32 + 0.5, y as f32 + 0.5);
        let inside = |o: &[f32; 2]| {
            let (u, v) = (cx - o[0], cy - o[1]);
            u > 0.0 && v > 0.0 && u + v < LEG
        };
        let hit = TRIANGLES.iter().find(|(o, _)| inside(o));
        Some(hit.map_or(CLEAR, |(_, c)| c.map(|v| (v * 255.0) as u8)))
    });
    let words_ok = match verify_fill(data, BASE, WORDS) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("utrace-workload: shader_objects: {e}");
            false
        }
    };
    Ok(pixels_ok && words_ok)
}

/// Sets the state the spec lists for drawing with shader objects ("Setting State"), for a
/// vertex and a fragment shader, one color attachment, rasterization on, and only the
/// features this device enables (no alphaToOne, depthBounds, depthClamp, logicOp, no
/// extension adding state).
fn set_state(dev: &Device, so: &ash::ext::shader_object::Device, cb: vk::CommandBuffer) {
    let d = &dev.device;
    let equation = vk::ColorBlendEquationEXT::default()
        .src_color_blend_factor(vk::BlendFactor::ONE)
        .dst_color_blend_factor(vk::BlendFactor::ZERO)
        .color_blend_op(vk::BlendOp::ADD)
        .src_alpha_blend_factor(vk::BlendFactor::ONE)
        .dst_alpha_blend_factor(vk::BlendFactor::ZERO)
        .alpha_blend_op(vk::BlendOp::ADD);
    // SAFETY: `cb` is recording; shaderObject is enabled, which allows every one of these
    // (the core 1.3 ones need nothing more).
    unsafe {
        d.cmd_set_viewport_with_count(cb, &[graphics::viewport()]);
        d.cmd_set_scissor_with_count(cb, &[graphics::area()]);
        d.cmd_set_rasterizer_discard_enable(cb, false);
        // A vertex shader is bound.
        so.cmd_set_vertex_input(cb, &[], &[]);
        d.cmd_set_primitive_topology(cb, vk::PrimitiveTopology::TRIANGLE_LIST);
        d.cmd_set_primitive_restart_enable(cb, false);
        // Rasterization is on.
        so.cmd_set_rasterization_samples(cb, vk::SampleCountFlags::TYPE_1);
        so.cmd_set_sample_mask(cb, vk::SampleCountFlags::TYPE_1, &[u32::MAX]);
        so.cmd_set_alpha_to_coverage_enable(cb, false);
        so.cmd_set_polygon_mode(cb, vk::PolygonMode::FILL);
        d.cmd_set_cull_mode(cb, vk::CullModeFlags::NONE);
        d.cmd_set_front_face(cb, vk::FrontFace::COUNTER_CLOCKWISE);
        d.cmd_set_depth_test_enable(cb, false);
        d.cmd_set_depth_write_enable(cb, false);
        d.cmd_set_depth_compare_op(cb, vk::CompareOp::ALWAYS);
        d.cmd_set_depth_bias_enable(cb, false);
        d.cmd_set_depth_bias(cb, 0.0, 0.0, 0.0);
        d.cmd_set_stencil_test_enable(cb, false);
        // A fragment shader is bound, with one color attachment.
        so.cmd_set_color_blend_enable(cb, 0, &[vk::FALSE]);
        so.cmd_set_color_blend_equation(cb, 0, &[equation]);
        so.cmd_set_color_write_mask(cb, 0, &[vk::ColorComponentFlags::RGBA]);
    }
}

/// SPIR-V words as the bytes VkShaderCreateInfoEXT takes (4-byte aligned, as it requires).
fn bytes(words: &[u32]) -> &[u8] {
    // SAFETY: u32s are 4 initialized bytes each, with no stricter alignment for u8.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), words.len() * 4) }
}

/// A SPIR-V shader object of `stage`, entry point main, linked to no other (each stands
/// alone, as in engines that mix shaders freely).
fn shader_info(stage: vk::ShaderStageFlags, code: &[u32]) -> vk::ShaderCreateInfoEXT<'_> {
    vk::ShaderCreateInfoEXT::default()
        .stage(stage)
        .code_type(vk::ShaderCodeTypeEXT::SPIRV)
        .code(bytes(code))
        .name(c"main")
}

fn objects(dev: &Device, so: &ash::ext::shader_object::Device, data: &Buffer) -> Result<Objects> {
    let d = &dev.device;
    let vert = spirv(include_bytes!("../../../shaders/shader_objects.vert.spv"))?;
    let frag = spirv(include_bytes!("../../../shaders/shader_objects.frag.spv"))?;
    let comp = spirv(include_bytes!("../../../shaders/fill.comp.spv"))?;
    let graphics_push = [vk::PushConstantRange::default()
        .stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT)
        .size(PUSH_SIZE)];
    let compute_push = [vk::PushConstantRange::default()
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
        .size(8)];
    let buffers = BufferSet::new(
        dev,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::ShaderStageFlags::COMPUTE,
        data,
    )?;
    // SAFETY: valid create infos on a live device; the SPIR-V is 4-byte aligned; shaders
    // created before a failure are destroyed.
    unsafe {
        let set_layouts = [buffers.layout];
        let graphics_layout = check(
            d.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&graphics_push),
                None,
            ),
            "vkCreatePipelineLayout",
        )?;
        let compute_layout = check(
            d.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&set_layouts)
                    .push_constant_ranges(&compute_push),
                None,
            ),
            "vkCreatePipelineLayout",
        )?;
        let infos = [
            shader_info(vk::ShaderStageFlags::VERTEX, &vert)
                .next_stage(vk::ShaderStageFlags::FRAGMENT)
                .push_constant_ranges(&graphics_push),
            shader_info(vk::ShaderStageFlags::FRAGMENT, &frag).push_constant_ranges(&graphics_push),
            shader_info(vk::ShaderStageFlags::COMPUTE, &comp)
                .set_layouts(&set_layouts)
                .push_constant_ranges(&compute_push),
        ];
        let shaders = match so.create_shaders(&infos, None) {
            Ok(s) => s,
            Err((made, e)) => {
                for s in made.into_iter().filter(|s| !s.is_null()) {
                    so.destroy_shader(s, None);
                }
                return Err(format!("vkCreateShadersEXT failed: {e}"));
            }
        };
        Ok(Objects {
            vs: shaders[0],
            fs: shaders[1],
            cs: shaders[2],
            graphics_layout,
            compute_layout,
            buffers,
        })
    }
}

fn destroy(dev: &Device, so: &ash::ext::shader_object::Device, o: Objects) {
    let d = &dev.device;
    // SAFETY: no pending work uses these objects.
    unsafe {
        for s in [o.vs, o.fs, o.cs] {
            so.destroy_shader(s, None);
        }
        d.destroy_pipeline_layout(o.graphics_layout, None);
        d.destroy_pipeline_layout(o.compute_layout, None);
    }
    o.buffers.destroy(dev);
}
