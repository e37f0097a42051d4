//! The pipelines a command buffer has bound, so that its draws and dispatches can say which
//! pipeline did the work ("which pipeline is slow" is the first question after "which pass").
//! Kept per recording: Vulkan's bound state starts empty with each `vkBeginCommandBuffer`,
//! and a secondary inherits none of its primary's.

use ash::vk;
use ash::vk::Handle;

/// The graphics and compute pipelines bound at this point of a recording (0: none yet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BoundPipelines {
    pub graphics: u64,
    pub compute: u64,
}

impl BoundPipelines {
    /// `vkCmdBindPipeline`. Ray tracing and other bind points are not traced by any
    /// tracepoint, so they are not kept.
    pub fn bind(&mut self, point: vk::PipelineBindPoint, pipeline: vk::Pipeline) {
        match point {
            vk::PipelineBindPoint::GRAPHICS => self.graphics = pipeline.as_raw(),
            vk::PipelineBindPoint::COMPUTE => self.compute = pipeline.as_raw(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bind_point_keeps_its_own_pipeline() {
        let mut b = BoundPipelines::default();
        b.bind(vk::PipelineBindPoint::GRAPHICS, vk::Pipeline::from_raw(7));
        b.bind(vk::PipelineBindPoint::COMPUTE, vk::Pipeline::from_raw(9));
        b.bind(
            vk::PipelineBindPoint::RAY_TRACING_KHR,
            vk::Pipeline::from_raw(11),
        );
        assert_eq!(
            b,
            BoundPipelines {
                graphics: 7,
                compute: 9
            }
        );
        b.bind(vk::PipelineBindPoint::GRAPHICS, vk::Pipeline::from_raw(8));
        assert_eq!(b.graphics, 8);
    }
}
