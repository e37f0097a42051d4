use ash::vk;

use super::{check, Buffer, Device, Result};

/// The compute pipeline of `shaders/fill.comp` bound to one storage buffer.
pub struct FillPipeline {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    descriptor_pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
    module: vk::ShaderModule,
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
        let d = &dev.device;
        let code = ash::util::read_spv(&mut std::io::Cursor::new(
            &include_bytes!("../../../shaders/fill.comp.spv")[..],
        ))
        .map_err(|e| e.to_string())?;
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let push = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(8)];
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)];
        // SAFETY: every create info is valid and every handle belongs to this device.
        unsafe {
            let module = check(
                d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None),
                "vkCreateShaderModule",
            )?;
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
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            let info = [vk::ComputePipelineCreateInfo::default()
                .flags(flags)
                .stage(stage)
                .layout(layout)];
            let pipeline = d
                .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
                .map_err(|(_, e)| format!("vkCreateComputePipelines failed: {e}"))?[0];
            let descriptor_pool = check(
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
                        .descriptor_pool(descriptor_pool)
                        .set_layouts(&set_layouts),
                ),
                "vkAllocateDescriptorSets",
            )?[0];
            let buffer_info = [vk::DescriptorBufferInfo::default()
                .buffer(target.buffer)
                .range(vk::WHOLE_SIZE)];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&buffer_info);
            d.update_descriptor_sets(&[write], &[]);
            Ok(FillPipeline {
                pipeline,
                layout,
                set_layout,
                descriptor_pool,
                set,
                module,
            })
        }
    }

    /// Records `data[i] = i * 3 + base` for the first `count` words of the target.
    pub fn record(&self, dev: &Device, cb: vk::CommandBuffer, base: u32, count: u32) {
        let d = &dev.device;
        let push = [base.to_ne_bytes(), count.to_ne_bytes()].concat();
        // SAFETY: `cb` is recording; the pipeline, layout and set belong to this device.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                self.layout,
                0,
                &[self.set],
                &[],
            );
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
        let d = &dev.device;
        let push = [base.to_ne_bytes(), count.to_ne_bytes()].concat();
        // SAFETY: `cb` is recording; both pipelines were made by `with_flags` for the same
        // buffer, so their layouts are compatible.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline.pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                pipeline.layout,
                0,
                &[pipeline.set],
                &[],
            );
            d.cmd_push_constants(cb, pipeline.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
        }
        let _ = self;
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses these objects.
        unsafe {
            let d = &dev.device;
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_pool(self.descriptor_pool, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_shader_module(self.module, None);
        }
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
