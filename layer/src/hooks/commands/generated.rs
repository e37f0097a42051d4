//! Device-generated commands (VK_EXT_device_generated_commands): the execution of a
//! generated-commands buffer, and its explicit preprocessing as a range of its own. The
//! layer's declaration of the info structure is `crate::vk_ext`.

use ash::vk;

use super::bracketed;
use crate::trace::tracepoints::*;
use crate::vk_ext::GeneratedCommandsInfoEXT;

bracketed! {
    /// `vkCmdExecuteGeneratedCommandsEXT`: names the pipeline bound for the stages it runs.
    cmd_execute_generated_commands(cb, preprocessed: vk::Bool32, p_info: *const GeneratedCommandsInfoEXT) = ext cmd_execute_generated_commands;
    switch toggle::EXECUTE_GENERATED_COMMANDS;
    before |r, t| {
        // SAFETY: a valid info.
        let info = unsafe { &*p_info };
        let p = t.pipelines.for_stages(info.shader_stages);
        trace_start_execute_generated_commands(r, t, info.max_sequence_count, preprocessed != vk::FALSE, info.indirect_commands_layout, p)
    };
    after |r, t| trace_end_execute_generated_commands(r, t);
}

bracketed! {
    /// `vkCmdPreprocessGeneratedCommandsEXT`.
    cmd_preprocess_generated_commands(cb, p_info: *const GeneratedCommandsInfoEXT, state: vk::CommandBuffer) = ext cmd_preprocess_generated_commands;
    switch toggle::PREPROCESS_GENERATED_COMMANDS;
    before |r, t| {
        // SAFETY: a valid info.
        let info = unsafe { &*p_info };
        trace_start_preprocess_generated_commands(r, t, info.max_sequence_count, info.indirect_commands_layout)
    };
    after |r, t| trace_end_preprocess_generated_commands(r, t);
}
