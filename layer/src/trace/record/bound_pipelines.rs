//! The pipelines a command buffer has bound, so that its draws, dispatches and ray traces
//! can say which pipeline did the work ("which pipeline is slow" is the first question after
//! "which pass"). Kept per recording: Vulkan's bound state starts empty with each
//! `vkBeginCommandBuffer`, and a secondary inherits none of its primary's. Shader objects
//! (`vkCmdBindShadersEXT`) stand in for a pipeline as their set's id (see `shader_sets`).

use ash::vk;
use ash::vk::Handle;

use crate::trace::shader_sets::{ShaderSets, GRAPHICS_STAGES};

/// What is bound at this point of a recording (0: nothing yet): a pipeline's handle, or a
/// shader set's id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BoundPipelines {
    pub graphics: u64,
    pub compute: u64,
    pub ray_tracing: u64,
    /// The shader objects bound to each graphics stage, in pipeline order.
    shaders: [u64; GRAPHICS_STAGES],
}

/// Where each graphics stage's shader object sits in [`BoundPipelines::shaders`].
fn graphics_slot(stage: vk::ShaderStageFlags) -> Option<usize> {
    type S = vk::ShaderStageFlags;
    Some(match stage {
        S::TASK_EXT => 0,
        S::MESH_EXT => 1,
        S::VERTEX => 2,
        S::TESSELLATION_CONTROL => 3,
        S::TESSELLATION_EVALUATION => 4,
        S::GEOMETRY => 5,
        S::FRAGMENT => 6,
        _ => return None,
    })
}

impl BoundPipelines {
    /// `vkCmdBindPipeline`. A graphics pipeline replaces the shader objects of every
    /// graphics stage.
    pub fn bind(&mut self, point: vk::PipelineBindPoint, pipeline: vk::Pipeline) {
        match point {
            vk::PipelineBindPoint::GRAPHICS => {
                self.graphics = pipeline.as_raw();
                self.shaders = [0; GRAPHICS_STAGES];
            }
            vk::PipelineBindPoint::COMPUTE => self.compute = pipeline.as_raw(),
            vk::PipelineBindPoint::RAY_TRACING_KHR => self.ray_tracing = pipeline.as_raw(),
            _ => {}
        }
    }

    /// `vkCmdBindShadersEXT`: each stage gets its shader (a null one unbinds it); the draws
    /// that follow name the set of graphics stages bound, the dispatches the compute shader.
    pub fn bind_shaders(
        &mut self,
        stages: &[vk::ShaderStageFlags],
        shaders: Option<&[vk::ShaderEXT]>,
        sets: &ShaderSets,
    ) {
        let before = self.shaders;
        for (k, &stage) in stages.iter().enumerate() {
            // A null array unbinds every stage listed.
            let shader = shaders.and_then(|s| s.get(k)).map_or(0, |s| s.as_raw());
            if stage == vk::ShaderStageFlags::COMPUTE {
                self.compute = shader;
            } else if let Some(slot) = graphics_slot(stage) {
                self.shaders[slot] = shader;
            }
        }
        if self.shaders != before {
            self.graphics = sets.id(&self.shaders);
        }
    }

    /// The pipeline (or shader set) that runs work of `stages` (generated commands say
    /// which stages they run).
    pub fn for_stages(&self, stages: vk::ShaderStageFlags) -> u64 {
        if stages.contains(vk::ShaderStageFlags::COMPUTE) {
            self.compute
        } else if stages
            .intersects(vk::ShaderStageFlags::RAYGEN_KHR | vk::ShaderStageFlags::MISS_KHR)
        {
            self.ray_tracing
        } else {
            self.graphics
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::object_names::ObjectNames;
    use crate::trace::shader_sets::SET_ID_BASE;

    #[test]
    fn each_bind_point_keeps_its_own_pipeline() {
        let mut b = BoundPipelines::default();
        b.bind(vk::PipelineBindPoint::GRAPHICS, vk::Pipeline::from_raw(7));
        b.bind(vk::PipelineBindPoint::COMPUTE, vk::Pipeline::from_raw(9));
        b.bind(
            vk::PipelineBindPoint::RAY_TRACING_KHR,
            vk::Pipeline::from_raw(11),
        );
        assert_eq!((b.graphics, b.compute, b.ray_tracing), (7, 9, 11));
        b.bind(vk::PipelineBindPoint::GRAPHICS, vk::Pipeline::from_raw(8));
        assert_eq!(b.graphics, 8);
    }

    #[test]
    fn shader_objects_stand_in_for_pipelines() {
        let sets = ShaderSets::new(ObjectNames::default());
        let mut b = BoundPipelines::default();
        b.bind(vk::PipelineBindPoint::GRAPHICS, vk::Pipeline::from_raw(7));
        type S = vk::ShaderStageFlags;
        let (vs, fs, cs) = (
            vk::ShaderEXT::from_raw(0x70),
            vk::ShaderEXT::from_raw(0x80),
            vk::ShaderEXT::from_raw(0x90),
        );
        b.bind_shaders(
            &[S::VERTEX, S::FRAGMENT, S::GEOMETRY],
            Some(&[vs, fs, vk::ShaderEXT::null()]),
            &sets,
        );
        assert_eq!(b.graphics, SET_ID_BASE + 1);
        b.bind_shaders(&[S::COMPUTE], Some(&[cs]), &sets);
        assert_eq!((b.graphics, b.compute), (SET_ID_BASE + 1, 0x90));
        assert_eq!(b.for_stages(S::COMPUTE), 0x90);
        // Unbinding the fragment shader leaves the vertex shader alone: its own handle.
        b.bind_shaders(&[S::FRAGMENT], None, &sets);
        assert_eq!(b.graphics, 0x70);
        // A pipeline takes the graphics stages back.
        b.bind(vk::PipelineBindPoint::GRAPHICS, vk::Pipeline::from_raw(7));
        assert_eq!(b.graphics, 7);
        b.bind_shaders(&[S::VERTEX], Some(&[vs]), &sets);
        assert_eq!(b.graphics, 0x70);
    }
}
