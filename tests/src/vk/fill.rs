//! The compute pipelines of the workload's fill shaders: one shader, one buffer it writes
//! (set 0, binding 0), push constants. `shaders/fill.comp` by default.

use ash::vk;

use super::{check, destroy_shader_modules, shader_module, Buffer, BufferSet, Device, Result};

/// A compute pipeline bound to one storage buffer (by default the one of
/// `shaders/fill.comp`).
pub struct FillPipeline {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    buffers: BufferSet,
}

/// Invocations per workgroup in `fill.comp`.
pub const FILL_GROUP: u32 = 64;

impl FillPipeline {
    pub fn new(dev: &Device, target: &Buffer) -> Result<FillPipeline> {
        Self::with_flags(dev, target, vk::PipelineCreateFlags::empty())
    }

    /// As [`Self::new`], with pipeline create flags (e.g. `DISPATCH_BASE`).
    pub fn with_flags(
        dev: &Device,
        target: &Buffer,
        flags: vk::PipelineCreateFlags,
    ) -> Result<FillPipeline> {
        let spirv = include_bytes!("../../../shaders/fill.comp.spv");
        Self::with_shader(dev, target, spirv, 8, flags)
    }

    /// The pipeline of another compute shader (SPIR-V `bytes`) of the same shape: its
    /// storage buffer at set 0, binding 0, and `push_size` bytes of push constants.
    pub fn with_shader(
        dev: &Device,
        target: &Buffer,
        bytes: &[u8],
        push_size: u32,
        flags: vk::PipelineCreateFlags,
    ) -> Result<FillPipeline> {
        let d = &dev.device;
        let compute = vk::ShaderStageFlags::COMPUTE;
        let buffers = BufferSet::new(dev, vk::DescriptorType::STORAGE_BUFFER, compute, target)?;
        let module = shader_module(dev, bytes)?;
        let push = [vk::PushConstantRange::default()
            .stage_flags(compute)
            .size(push_size)];
        let set_layouts = [buffers.layout];
        let layout_info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(&set_layouts)
            .push_constant_ranges(&push);
        // SAFETY: a valid create info on a live device.
        let layout = match check(
            unsafe { d.create_pipeline_layout(&layout_info, None) },
            "vkCreatePipelineLayout",
        ) {
            Ok(l) => l,
            Err(e) => {
                destroy_shader_modules(dev, &[module]);
                buffers.destroy(dev);
                return Err(e);
            }
        };
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(compute)
            .module(module)
            .name(c"main");
        let info = [vk::ComputePipelineCreateInfo::default()
            .flags(flags)
            .stage(stage)
            .layout(layout)];
        // SAFETY: a valid create info whose layout and module belong to this device.
        let created = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &info, None) };
        // The pipeline does not need its module once created.
        destroy_shader_modules(dev, &[module]);
        match created {
            Ok(pipelines) => Ok(FillPipeline {
                pipeline: pipelines[0],
                layout,
                buffers,
            }),
            Err((_, e)) => {
                // SAFETY: the layout is used by no pipeline.
                unsafe { d.destroy_pipeline_layout(layout, None) };
                buffers.destroy(dev);
                Err(format!("vkCreateComputePipelines failed: {e}"))
            }
        }
    }

    /// vkCmdBindPipeline and vkCmdBindDescriptorSets of the pipeline and its buffer's set.
    pub fn bind(&self, dev: &Device, cb: vk::CommandBuffer) {
        let d = &dev.device;
        // SAFETY: `cb` is recording; the pipeline, layout and set belong to this device.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                self.layout,
                0,
                &[self.buffers.set],
                &[],
            );
        }
    }

    /// Records `data[i] = i * 3 + base` for the first `count` words of the target.
    pub fn record(&self, dev: &Device, cb: vk::CommandBuffer, base: u32, count: u32) {
        let d = &dev.device;
        let push = [base.to_ne_bytes(), count.to_ne_bytes()].concat();
        self.bind(dev, cb);
        // SAFETY: `cb` is recording; the layout belongs to this device and its push range
        // covers these 8 bytes.
        unsafe {
            d.cmd_push_constants(cb, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
            d.cmd_dispatch(cb, count.div_ceil(FILL_GROUP), 1, 1);
        }
    }

    /// Binds `pipeline` (which shares this one's layout shape) with this one's descriptor
    /// set and the push constants `data[i] = i * 3 + base` for `count` words, without
    /// dispatching.
    pub fn record_bindings(
        &self,
        dev: &Device,
        cb: vk::CommandBuffer,
        pipeline: &FillPipeline,
        base: u32,
        count: u32,
    ) {
        let push = [base.to_ne_bytes(), count.to_ne_bytes()].concat();
        pipeline.bind(dev, cb);
        // SAFETY: `cb` is recording; both pipelines were made by `with_flags` for the same
        // buffer, so their layouts are compatible.
        unsafe {
            dev.device.cmd_push_constants(
                cb,
                pipeline.layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                &push,
            )
        };
        let _ = self;
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses these objects.
        unsafe {
            let d = &dev.device;
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
        }
        self.buffers.destroy(dev);
    }
}

/// Checks `data[i] == i * 3 + base` for the first `count` words.
pub fn verify_fill(buffer: &Buffer, base: u32, count: u32) -> Result<()> {
    for (i, &v) in buffer.words().iter().take(count as usize).enumerate() {
        let want = i as u32 * 3 + base;
        if v != want {
            return Err(format!(
                "compute result wrong at {i}: {v} instead of {want}"
            ));
        }
    }
    Ok(())
}
