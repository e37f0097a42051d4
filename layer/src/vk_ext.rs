//! Vulkan declarations newer than the `ash` headers the layer is built with (1.3.281),
//! written from the Vulkan registry (vk.xml 1.4.342): only what the layer's hooks read.

use ash::vk;

/// `VkGeneratedCommandsInfoEXT` (VK_EXT_device_generated_commands, extension 573): what a
/// `vkCmdExecuteGeneratedCommandsEXT` or `vkCmdPreprocessGeneratedCommandsEXT` executes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GeneratedCommandsInfoEXT {
    /// `VK_STRUCTURE_TYPE_GENERATED_COMMANDS_INFO_EXT`, 1000572004.
    pub s_type: vk::StructureType,
    pub p_next: *const std::ffi::c_void,
    pub shader_stages: vk::ShaderStageFlags,
    /// `VkIndirectExecutionSetEXT`, a non-dispatchable handle (may be null).
    pub indirect_execution_set: u64,
    /// `VkIndirectCommandsLayoutEXT`, a non-dispatchable handle.
    pub indirect_commands_layout: u64,
    pub indirect_address: vk::DeviceAddress,
    pub indirect_address_size: vk::DeviceSize,
    pub preprocess_address: vk::DeviceAddress,
    pub preprocess_size: vk::DeviceSize,
    pub max_sequence_count: u32,
    pub sequence_count_address: vk::DeviceAddress,
    pub max_draw_count: u32,
}

/// `vkCmdExecuteGeneratedCommandsEXT`.
pub type PfnCmdExecuteGeneratedCommandsEXT = unsafe extern "system" fn(
    command_buffer: vk::CommandBuffer,
    is_preprocessed: vk::Bool32,
    p_generated_commands_info: *const GeneratedCommandsInfoEXT,
);

/// `vkCmdPreprocessGeneratedCommandsEXT`.
pub type PfnCmdPreprocessGeneratedCommandsEXT = unsafe extern "system" fn(
    command_buffer: vk::CommandBuffer,
    p_generated_commands_info: *const GeneratedCommandsInfoEXT,
    state_command_buffer: vk::CommandBuffer,
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The C layout of the structure (offsets as a C compiler lays it out on 64-bit).
    #[test]
    fn generated_commands_info_has_the_c_layout() {
        assert_eq!(
            std::mem::offset_of!(GeneratedCommandsInfoEXT, shader_stages),
            16
        );
        assert_eq!(
            std::mem::offset_of!(GeneratedCommandsInfoEXT, indirect_execution_set),
            24
        );
        assert_eq!(
            std::mem::offset_of!(GeneratedCommandsInfoEXT, max_sequence_count),
            72
        );
        assert_eq!(
            std::mem::offset_of!(GeneratedCommandsInfoEXT, sequence_count_address),
            80
        );
        assert_eq!(
            std::mem::offset_of!(GeneratedCommandsInfoEXT, max_draw_count),
            88
        );
        assert_eq!(std::mem::size_of::<GeneratedCommandsInfoEXT>(), 96);
    }
}
