//! State the tracepoints of later commands report: the bound pipelines and shader objects
//! (see `trace::record::bound_pipelines`). Writes no tracepoint of its own.

use ash::vk;

use super::bracketed;
use crate::hooks::slice;

bracketed! {
    /// `vkCmdBindPipeline`: remembered for the draws and dispatches that follow.
    cmd_bind_pipeline(cb, point: vk::PipelineBindPoint, pipeline: vk::Pipeline) = core cmd_bind_pipeline;
    before |r, t| t.pipelines.bind(point, pipeline);
    after |r, t| {};
}

bracketed! {
    /// `vkCmdBindShadersEXT`: shader objects, remembered as the set the draws and dispatches
    /// that follow name.
    cmd_bind_shaders(cb, count: u32, p_stages: *const vk::ShaderStageFlags, p_shaders: *const vk::ShaderEXT) = ext cmd_bind_shaders;
    before |r, t| {
        // SAFETY: the application passes `count` stages, and `count` shaders or null.
        let (stages, shaders) = unsafe { (slice(p_stages, count), (!p_shaders.is_null()).then(|| slice(p_shaders, count))) };
        t.pipelines.bind_shaders(stages, shaders, &r.objects.shader_sets)
    };
    after |r, t| {};
}
