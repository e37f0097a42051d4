//! State the tracepoints of later commands report: the bound pipelines (see
//! `trace::bound_pipelines`). Writes no tracepoint of its own.

use ash::vk;

use super::bracketed;

bracketed! {
    /// `vkCmdBindPipeline`: remembered for the draws and dispatches that follow.
    cmd_bind_pipeline(cb, point: vk::PipelineBindPoint, pipeline: vk::Pipeline) = core cmd_bind_pipeline;
    before |r, t| t.pipelines.bind(point, pipeline);
    after |r, t| {};
}
