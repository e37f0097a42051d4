//! The indirect commands layout of the `generated_commands` scenario (a push-constant token
//! and a dispatch token per [`super::Sequence`]), its preprocess buffer, and the recording
//! of the extension's preprocess and execute commands with the bound pipeline.

use std::ffi::c_void;

use ash::vk;

use super::{PUSH_SIZE, SEQUENCES, STRIDE};
use crate::modern::dgc_ext::{self as ext, Fns};
use crate::vk::{check, Buffer, Device, FillPipeline, Result};

/// An indirect commands layout over [`super::Sequence`]s, its preprocess buffer, and the
/// generated-commands info of the three sequences.
pub struct Generated<'a> {
    fns: &'a Fns,
    layout: ext::IndirectCommandsLayoutEXT,
    preprocess: Preprocess,
    pipeline: vk::Pipeline,
    indirect: vk::DeviceAddress,
}

impl<'a> Generated<'a> {
    pub fn new(
        dev: &Device,
        fns: &'a Fns,
        fill: &FillPipeline,
        sequences: &Buffer,
        flags: ext::IndirectCommandsLayoutUsageFlagsEXT,
    ) -> Result<Self> {
        let push = ext::IndirectCommandsPushConstantTokenEXT {
            update_range: vk::PushConstantRange {
                stage_flags: vk::ShaderStageFlags::COMPUTE,
                offset: 0,
                size: PUSH_SIZE,
            },
        };
        let token = |type_, data, offset| ext::IndirectCommandsLayoutTokenEXT {
            s_type: ext::STYPE_LAYOUT_TOKEN,
            p_next: std::ptr::null(),
            type_,
            data: ext::IndirectCommandsTokenDataEXT {
                p_push_constant: data,
            },
            offset,
        };
        let tokens = [
            token(ext::IndirectCommandsTokenTypeEXT::PUSH_CONSTANT, &push, 0),
            // The dispatch token has no data (the union is ignored for it).
            token(
                ext::IndirectCommandsTokenTypeEXT::DISPATCH,
                std::ptr::null(),
                PUSH_SIZE,
            ),
        ];
        let info = ext::IndirectCommandsLayoutCreateInfoEXT {
            s_type: ext::STYPE_LAYOUT_CREATE_INFO,
            p_next: std::ptr::null(),
            flags,
            shader_stages: vk::ShaderStageFlags::COMPUTE,
            indirect_stride: STRIDE,
            pipeline_layout: fill.layout,
            token_count: tokens.len() as u32,
            p_tokens: tokens.as_ptr(),
        };
        let mut layout = ext::IndirectCommandsLayoutEXT::default();
        // SAFETY: a valid create info whose tokens and push range outlive the call.
        let created = unsafe {
            (fns.create_layout)(dev.device.handle(), &info, std::ptr::null(), &mut layout)
        };
        check(created.result(), "vkCreateIndirectCommandsLayoutEXT")?;
        let pipeline_info = pipeline_info(fill.pipeline);
        let reqs_info = ext::GeneratedCommandsMemoryRequirementsInfoEXT {
            s_type: ext::STYPE_MEMORY_REQUIREMENTS_INFO,
            p_next: &pipeline_info as *const _ as *const c_void,
            indirect_execution_set: ext::IndirectExecutionSetEXT::default(),
            indirect_commands_layout: layout,
            max_sequence_count: SEQUENCES.len() as u32,
            max_draw_count: 0,
        };
        let mut reqs = vk::MemoryRequirements2::default();
        // SAFETY: a live layout; the info names the pipeline the execution will have bound.
        unsafe { (fns.get_memory_requirements)(dev.device.handle(), &reqs_info, &mut reqs) };
        Ok(Generated {
            fns,
            layout,
            preprocess: Preprocess::new(dev, reqs.memory_requirements)?,
            pipeline: fill.pipeline,
            indirect: sequences.address,
        })
    }

    /// The info of the three sequences; `pipeline_info` must outlive its use.
    fn info(
        &self,
        pipeline_info: &ext::GeneratedCommandsPipelineInfoEXT,
    ) -> ext::GeneratedCommandsInfoEXT {
        ext::GeneratedCommandsInfoEXT {
            s_type: ext::STYPE_GENERATED_COMMANDS_INFO,
            p_next: pipeline_info as *const _ as *const c_void,
            shader_stages: vk::ShaderStageFlags::COMPUTE,
            indirect_execution_set: ext::IndirectExecutionSetEXT::default(),
            indirect_commands_layout: self.layout,
            indirect_address: self.indirect,
            indirect_address_size: u64::from(STRIDE) * SEQUENCES.len() as u64,
            preprocess_address: self.preprocess.address,
            preprocess_size: self.preprocess.size,
            max_sequence_count: SEQUENCES.len() as u32,
            sequence_count_address: 0,
            max_draw_count: 0,
        }
    }

    /// vkCmdPreprocessGeneratedCommandsEXT with `cb` as its own state command buffer.
    pub fn preprocess(&self, cb: vk::CommandBuffer) {
        let pipeline_info = pipeline_info(self.pipeline);
        let info = self.info(&pipeline_info);
        // SAFETY: `cb` is recording with the pipeline and its descriptor set bound; the
        // layout was made with EXPLICIT_PREPROCESS.
        unsafe { (self.fns.cmd_preprocess)(cb, &info, cb) };
    }

    /// vkCmdExecuteGeneratedCommandsEXT.
    pub fn execute(&self, cb: vk::CommandBuffer, preprocessed: bool) {
        let pipeline_info = pipeline_info(self.pipeline);
        let info = self.info(&pipeline_info);
        let flag = if preprocessed { vk::TRUE } else { vk::FALSE };
        // SAFETY: `cb` is recording outside a render pass with the pipeline and its
        // descriptor set bound; `preprocessed` matches the layout's flags.
        unsafe { (self.fns.cmd_execute)(cb, flag, &info) };
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses the layout.
        unsafe { (self.fns.destroy_layout)(dev.device.handle(), self.layout, std::ptr::null()) };
        self.preprocess.destroy(dev);
    }
}

fn pipeline_info(pipeline: vk::Pipeline) -> ext::GeneratedCommandsPipelineInfoEXT {
    ext::GeneratedCommandsPipelineInfoEXT {
        s_type: ext::STYPE_PIPELINE_INFO,
        p_next: std::ptr::null_mut(),
        pipeline,
    }
}

/// A preprocess buffer of the size and memory types the driver asks for (none when it asks
/// for zero bytes: then there is nothing to preprocess into).
struct Preprocess {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    address: vk::DeviceAddress,
    size: vk::DeviceSize,
}

impl Preprocess {
    fn new(dev: &Device, reqs: vk::MemoryRequirements) -> Result<Preprocess> {
        let d = &dev.device;
        if reqs.size == 0 {
            return Ok(Preprocess {
                buffer: vk::Buffer::null(),
                memory: vk::DeviceMemory::null(),
                address: 0,
                size: 0,
            });
        }
        // PREPROCESS_BUFFER exists only among maintenance5's 64-bit usage flags, which
        // replace the create info's own usage.
        let mut usage = vk::BufferUsageFlags2CreateInfoKHR::default()
            .usage(ext::USAGE_PREPROCESS_BUFFER | vk::BufferUsageFlags2KHR::SHADER_DEVICE_ADDRESS);
        let info = vk::BufferCreateInfo::default()
            .size(reqs.size)
            .push_next(&mut usage);
        // SAFETY: valid create and allocate infos; memory of a type both the buffer and the
        // generated commands allow, bound once at offset 0.
        unsafe {
            let buffer = check(d.create_buffer(&info, None), "vkCreateBuffer")?;
            let own = d.get_buffer_memory_requirements(buffer);
            let type_index = dev.memory_type(
                own.memory_type_bits & reqs.memory_type_bits,
                vk::MemoryPropertyFlags::empty(),
            )?;
            let mut flags = vk::MemoryAllocateFlagsInfo::default()
                .flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(own.size)
                .memory_type_index(type_index)
                .push_next(&mut flags);
            let memory = check(d.allocate_memory(&alloc, None), "vkAllocateMemory")?;
            check(
                d.bind_buffer_memory(buffer, memory, 0),
                "vkBindBufferMemory",
            )?;
            let address =
                d.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer));
            let preprocess = Preprocess {
                buffer,
                memory,
                address,
                size: reqs.size,
            };
            if address % reqs.alignment.max(1) != 0 {
                preprocess.destroy(dev);
                return Err(format!(
                    "the preprocess buffer's address {address:#x} is not aligned to {}",
                    reqs.alignment
                ));
            }
            Ok(preprocess)
        }
    }

    fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses the buffer (null handles are ignored).
        unsafe {
            dev.device.destroy_buffer(self.buffer, None);
            dev.device.free_memory(self.memory, None);
        }
    }
}
