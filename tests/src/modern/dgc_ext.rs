//! Hand-written declarations of VK_EXT_device_generated_commands (Vulkan 1.3.296), which
//! ash 0.38 (headers 1.3.281) lacks: the sType values, enums, flags, structures and
//! function pointers the `generated_commands` scenario uses, and their loading through
//! vkGetDeviceProcAddr. The structures follow `vulkan_core.h` (Vulkan-Headers v1.3.296 and
//! 1.4.359 agree on them); the assertions at the end pin their sizes and field offsets to
//! what a C compiler gives for that header on x86-64.

use std::ffi::{c_void, CStr};

use ash::vk;

use crate::vk::{Device, Instance, Result};

pub const NAME: &CStr = c"VK_EXT_device_generated_commands";

pub const STYPE_FEATURES: vk::StructureType = vk::StructureType::from_raw(1_000_572_000);
pub const STYPE_PROPERTIES: vk::StructureType = vk::StructureType::from_raw(1_000_572_001);
pub const STYPE_MEMORY_REQUIREMENTS_INFO: vk::StructureType =
    vk::StructureType::from_raw(1_000_572_002);
pub const STYPE_GENERATED_COMMANDS_INFO: vk::StructureType =
    vk::StructureType::from_raw(1_000_572_004);
pub const STYPE_LAYOUT_CREATE_INFO: vk::StructureType = vk::StructureType::from_raw(1_000_572_006);
pub const STYPE_LAYOUT_TOKEN: vk::StructureType = vk::StructureType::from_raw(1_000_572_007);
pub const STYPE_PIPELINE_INFO: vk::StructureType = vk::StructureType::from_raw(1_000_572_013);

/// VK_PIPELINE_STAGE_2_COMMAND_PREPROCESS_BIT_EXT (the value of the NV extension's bit).
pub const STAGE_COMMAND_PREPROCESS: vk::PipelineStageFlags2 =
    vk::PipelineStageFlags2::from_raw(0x0002_0000);
/// VK_ACCESS_2_COMMAND_PREPROCESS_WRITE_BIT_EXT.
pub const ACCESS_COMMAND_PREPROCESS_WRITE: vk::AccessFlags2 =
    vk::AccessFlags2::from_raw(0x0004_0000);
/// VK_BUFFER_USAGE_2_PREPROCESS_BUFFER_BIT_EXT (only expressible in the 64-bit usage flags
/// of VK_KHR_maintenance5).
pub const USAGE_PREPROCESS_BUFFER: vk::BufferUsageFlags2KHR =
    vk::BufferUsageFlags2KHR::from_raw(0x8000_0000);

/// VkIndirectCommandsLayoutEXT (a non-dispatchable handle).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IndirectCommandsLayoutEXT(pub u64);

/// VkIndirectExecutionSetEXT (a non-dispatchable handle; the scenario passes only null).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IndirectExecutionSetEXT(pub u64);

/// VkIndirectCommandsTokenTypeEXT.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndirectCommandsTokenTypeEXT(pub i32);

impl IndirectCommandsTokenTypeEXT {
    pub const PUSH_CONSTANT: Self = Self(1);
    pub const DISPATCH: Self = Self(9);
}

/// VkIndirectCommandsLayoutUsageFlagsEXT.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndirectCommandsLayoutUsageFlagsEXT(pub u32);

impl IndirectCommandsLayoutUsageFlagsEXT {
    pub const EMPTY: Self = Self(0);
    pub const EXPLICIT_PREPROCESS: Self = Self(0x1);
}

/// VkPhysicalDeviceDeviceGeneratedCommandsFeaturesEXT.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PhysicalDeviceDeviceGeneratedCommandsFeaturesEXT {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub device_generated_commands: vk::Bool32,
    pub dynamic_generated_pipeline_layout: vk::Bool32,
}

/// VkPhysicalDeviceDeviceGeneratedCommandsPropertiesEXT.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PhysicalDeviceDeviceGeneratedCommandsPropertiesEXT {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub max_indirect_pipeline_count: u32,
    pub max_indirect_shader_object_count: u32,
    pub max_indirect_sequence_count: u32,
    pub max_indirect_commands_token_count: u32,
    pub max_indirect_commands_token_offset: u32,
    pub max_indirect_commands_indirect_stride: u32,
    /// VkIndirectCommandsInputModeFlagsEXT.
    pub supported_indirect_commands_input_modes: u32,
    pub supported_indirect_commands_shader_stages: vk::ShaderStageFlags,
    pub supported_indirect_commands_shader_stages_pipeline_binding: vk::ShaderStageFlags,
    pub supported_indirect_commands_shader_stages_shader_binding: vk::ShaderStageFlags,
    pub device_generated_commands_transform_feedback: vk::Bool32,
    pub device_generated_commands_multi_draw_indirect_count: vk::Bool32,
}

/// VkGeneratedCommandsMemoryRequirementsInfoEXT.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GeneratedCommandsMemoryRequirementsInfoEXT {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub indirect_execution_set: IndirectExecutionSetEXT,
    pub indirect_commands_layout: IndirectCommandsLayoutEXT,
    pub max_sequence_count: u32,
    pub max_draw_count: u32,
}

/// VkGeneratedCommandsInfoEXT.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GeneratedCommandsInfoEXT {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub shader_stages: vk::ShaderStageFlags,
    pub indirect_execution_set: IndirectExecutionSetEXT,
    pub indirect_commands_layout: IndirectCommandsLayoutEXT,
    pub indirect_address: vk::DeviceAddress,
    pub indirect_address_size: vk::DeviceSize,
    pub preprocess_address: vk::DeviceAddress,
    pub preprocess_size: vk::DeviceSize,
    pub max_sequence_count: u32,
    pub sequence_count_address: vk::DeviceAddress,
    pub max_draw_count: u32,
}

/// VkIndirectCommandsPushConstantTokenEXT.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct IndirectCommandsPushConstantTokenEXT {
    pub update_range: vk::PushConstantRange,
}

/// VkIndirectCommandsTokenDataEXT: a union of four pointers, of which only the push-constant
/// one is declared (the others, to the vertex-buffer, index-buffer and execution-set token
/// structures, have the same size and are not used here).
#[repr(C)]
#[derive(Clone, Copy)]
pub union IndirectCommandsTokenDataEXT {
    pub p_push_constant: *const IndirectCommandsPushConstantTokenEXT,
}

/// VkIndirectCommandsLayoutTokenEXT.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IndirectCommandsLayoutTokenEXT {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub type_: IndirectCommandsTokenTypeEXT,
    pub data: IndirectCommandsTokenDataEXT,
    pub offset: u32,
}

/// VkIndirectCommandsLayoutCreateInfoEXT.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IndirectCommandsLayoutCreateInfoEXT {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub flags: IndirectCommandsLayoutUsageFlagsEXT,
    pub shader_stages: vk::ShaderStageFlags,
    pub indirect_stride: u32,
    pub pipeline_layout: vk::PipelineLayout,
    pub token_count: u32,
    pub p_tokens: *const IndirectCommandsLayoutTokenEXT,
}

/// VkGeneratedCommandsPipelineInfoEXT.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GeneratedCommandsPipelineInfoEXT {
    pub s_type: vk::StructureType,
    pub p_next: *mut c_void,
    pub pipeline: vk::Pipeline,
}

pub type GetGeneratedCommandsMemoryRequirementsFn = unsafe extern "system" fn(
    vk::Device,
    *const GeneratedCommandsMemoryRequirementsInfoEXT,
    *mut vk::MemoryRequirements2<'_>,
);
pub type CmdPreprocessGeneratedCommandsFn = unsafe extern "system" fn(
    vk::CommandBuffer,
    *const GeneratedCommandsInfoEXT,
    vk::CommandBuffer,
);
pub type CmdExecuteGeneratedCommandsFn =
    unsafe extern "system" fn(vk::CommandBuffer, vk::Bool32, *const GeneratedCommandsInfoEXT);
pub type CreateIndirectCommandsLayoutFn = unsafe extern "system" fn(
    vk::Device,
    *const IndirectCommandsLayoutCreateInfoEXT,
    *const vk::AllocationCallbacks<'_>,
    *mut IndirectCommandsLayoutEXT,
) -> vk::Result;
pub type DestroyIndirectCommandsLayoutFn = unsafe extern "system" fn(
    vk::Device,
    IndirectCommandsLayoutEXT,
    *const vk::AllocationCallbacks<'_>,
);

/// The extension's device functions the scenario calls.
pub struct Fns {
    pub get_memory_requirements: GetGeneratedCommandsMemoryRequirementsFn,
    pub cmd_preprocess: CmdPreprocessGeneratedCommandsFn,
    pub cmd_execute: CmdExecuteGeneratedCommandsFn,
    pub create_layout: CreateIndirectCommandsLayoutFn,
    pub destroy_layout: DestroyIndirectCommandsLayoutFn,
}

impl Fns {
    /// Loads the functions with vkGetDeviceProcAddr (through every layer beneath).
    pub fn load(inst: &Instance, dev: &Device) -> Result<Fns> {
        // SAFETY: each name is paired with the function type vulkan_core.h gives it.
        unsafe {
            Ok(Fns {
                get_memory_requirements: load(
                    inst,
                    dev,
                    c"vkGetGeneratedCommandsMemoryRequirementsEXT",
                )?,
                cmd_preprocess: load(inst, dev, c"vkCmdPreprocessGeneratedCommandsEXT")?,
                cmd_execute: load(inst, dev, c"vkCmdExecuteGeneratedCommandsEXT")?,
                create_layout: load(inst, dev, c"vkCreateIndirectCommandsLayoutEXT")?,
                destroy_layout: load(inst, dev, c"vkDestroyIndirectCommandsLayoutEXT")?,
            })
        }
    }
}

/// The device function `name` as an `F`.
///
/// # Safety
/// `F` must be the function pointer type of `name`.
unsafe fn load<F: Copy>(inst: &Instance, dev: &Device, name: &CStr) -> Result<F> {
    const { assert!(size_of::<F>() == size_of::<unsafe extern "system" fn()>()) };
    // SAFETY: a live device of this instance and a NUL-terminated name.
    let f = unsafe {
        (inst.instance.fp_v1_0().get_device_proc_addr)(dev.device.handle(), name.as_ptr())
    }
    .ok_or_else(|| format!("vkGetDeviceProcAddr gave no {}", name.to_string_lossy()))?;
    // SAFETY: same size (asserted above); the caller vouches for the signature.
    Ok(unsafe { std::mem::transmute_copy::<unsafe extern "system" fn(), F>(&f) })
}

// Sizes and offsets `gcc` gives for the structures of vulkan_core.h on x86-64.
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::offset_of;
    type Features = PhysicalDeviceDeviceGeneratedCommandsFeaturesEXT;
    type Properties = PhysicalDeviceDeviceGeneratedCommandsPropertiesEXT;
    type Requirements = GeneratedCommandsMemoryRequirementsInfoEXT;
    type Info = GeneratedCommandsInfoEXT;
    type Token = IndirectCommandsLayoutTokenEXT;
    type LayoutInfo = IndirectCommandsLayoutCreateInfoEXT;
    assert!(size_of::<Features>() == 24);
    assert!(offset_of!(Features, device_generated_commands) == 16);
    assert!(offset_of!(Features, dynamic_generated_pipeline_layout) == 20);
    assert!(size_of::<Properties>() == 64);
    assert!(offset_of!(Properties, max_indirect_sequence_count) == 24);
    assert!(offset_of!(Properties, supported_indirect_commands_shader_stages) == 44);
    assert!(
        offset_of!(
            Properties,
            device_generated_commands_multi_draw_indirect_count
        ) == 60
    );
    assert!(size_of::<Requirements>() == 40);
    assert!(offset_of!(Requirements, indirect_execution_set) == 16);
    assert!(offset_of!(Requirements, indirect_commands_layout) == 24);
    assert!(offset_of!(Requirements, max_sequence_count) == 32);
    assert!(offset_of!(Requirements, max_draw_count) == 36);
    assert!(size_of::<Info>() == 96);
    assert!(offset_of!(Info, shader_stages) == 16);
    assert!(offset_of!(Info, indirect_execution_set) == 24);
    assert!(offset_of!(Info, indirect_commands_layout) == 32);
    assert!(offset_of!(Info, indirect_address) == 40);
    assert!(offset_of!(Info, indirect_address_size) == 48);
    assert!(offset_of!(Info, preprocess_address) == 56);
    assert!(offset_of!(Info, preprocess_size) == 64);
    assert!(offset_of!(Info, max_sequence_count) == 72);
    assert!(offset_of!(Info, sequence_count_address) == 80);
    assert!(offset_of!(Info, max_draw_count) == 88);
    assert!(size_of::<IndirectCommandsPushConstantTokenEXT>() == 12);
    assert!(size_of::<IndirectCommandsTokenDataEXT>() == 8);
    assert!(size_of::<Token>() == 40);
    assert!(offset_of!(Token, type_) == 16);
    assert!(offset_of!(Token, data) == 24);
    assert!(offset_of!(Token, offset) == 32);
    assert!(size_of::<LayoutInfo>() == 56);
    assert!(offset_of!(LayoutInfo, flags) == 16);
    assert!(offset_of!(LayoutInfo, shader_stages) == 20);
    assert!(offset_of!(LayoutInfo, indirect_stride) == 24);
    assert!(offset_of!(LayoutInfo, pipeline_layout) == 32);
    assert!(offset_of!(LayoutInfo, token_count) == 40);
    assert!(offset_of!(LayoutInfo, p_tokens) == 48);
    assert!(size_of::<GeneratedCommandsPipelineInfoEXT>() == 24);
    assert!(offset_of!(GeneratedCommandsPipelineInfoEXT, pipeline) == 16);
};
