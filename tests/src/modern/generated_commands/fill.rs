//! The compute pipeline of `shaders/generated.comp` ("generated fill"), its descriptor set
//! bound to the target buffer, for the `generated_commands` scenario.

use ash::vk;

use crate::vk::{check, Buffer, Device, Result};

pub struct Fill {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
}

impl Fill {
    /// `push_size`: bytes of the shader's push constants.
    pub fn new(dev: &Device, target: &Buffer, push_size: u32) -> Result<Fill> {
        let d = &dev.device;
        let code = ash::util::read_spv(&mut std::io::Cursor::new(
            &include_bytes!("../../../../shaders/generated.comp.spv")[..],
        ))
        .map_err(|e| e.to_string())?;
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let push = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(push_size)];
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)];
        // SAFETY: every create info is valid and every handle belongs to this device; the
        // module is destroyed once the pipeline exists.
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
                .stage(stage)
                .layout(layout)];
            let pipeline = d
                .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
                .map_err(|(_, e)| format!("vkCreateComputePipelines failed: {e}"))?[0];
            d.destroy_shader_module(module, None);
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
                .buffer(target.buffer)
                .range(vk::WHOLE_SIZE)];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&buffer_info);
            d.update_descriptor_sets(&[write], &[]);
            Ok(Fill {
                pipeline,
                layout,
                set_layout,
                pool,
                set,
            })
        }
    }

    /// Binds the pipeline and its descriptor set (the push constants come from the
    /// generated commands).
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
                &[self.set],
                &[],
            );
        }
    }

    pub fn destroy(self, dev: &Device) {
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
