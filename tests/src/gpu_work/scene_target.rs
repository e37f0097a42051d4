//! The offscreen target of a scenario that draws one scene: a color image (read back or
//! shown by a blit, so also a transfer source), a depth image or none, a one-subpass render
//! pass over them, its framebuffer, and the triangle pipeline for that subpass.

use ash::vk;

use super::graphics::{self, Image, Pipeline, Target, COLOR, DEPTH};
use crate::vk::{Device, Result};

pub struct SceneTarget {
    pub color: Image,
    depth: Option<Image>,
    pub pass: vk::RenderPass,
    pub framebuffer: vk::Framebuffer,
    pub pipeline: Pipeline,
    clear_values: Vec<vk::ClearValue>,
}

impl SceneTarget {
    pub fn new(dev: &Device, depth: bool) -> Result<SceneTarget> {
        let color = Image::new(
            dev,
            COLOR,
            vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
            vk::SampleCountFlags::TYPE_1,
        )?;
        let depth = if depth {
            Some(Image::new(
                dev,
                DEPTH,
                vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
                vk::SampleCountFlags::TYPE_1,
            )?)
        } else {
            None
        };
        let pass = graphics::render_pass(dev, depth.is_some())?;
        let views: Vec<vk::ImageView> = [Some(color.view), depth.as_ref().map(|d| d.view)]
            .into_iter()
            .flatten()
            .collect();
        let framebuffer = graphics::framebuffer(dev, pass, &views)?;
        let pipeline = Pipeline::new(
            dev,
            Target::Subpass {
                pass,
                subpass: 0,
                depth: depth.is_some(),
            },
        )?;
        Ok(SceneTarget {
            color,
            clear_values: graphics::clears(depth.is_some()),
            depth,
            pass,
            framebuffer,
            pipeline,
        })
    }

    /// The render pass over the whole target, clearing it.
    pub fn begin_info(&self) -> vk::RenderPassBeginInfo<'_> {
        vk::RenderPassBeginInfo::default()
            .render_pass(self.pass)
            .framebuffer(self.framebuffer)
            .render_area(graphics::area())
            .clear_values(&self.clear_values)
    }

    /// Once no pending work uses it.
    pub fn destroy(self, dev: &Device) {
        // SAFETY: the caller's promise.
        unsafe {
            dev.device.destroy_framebuffer(self.framebuffer, None);
            dev.device.destroy_render_pass(self.pass, None);
        }
        self.pipeline.destroy(dev);
        self.color.destroy(dev);
        if let Some(depth) = self.depth {
            depth.destroy(dev);
        }
    }
}
