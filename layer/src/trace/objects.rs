//! What the layer remembers of the application's render passes and images, so that
//! tracepoints can name formats, load/store operations and view masks that the recording
//! commands themselves do not carry.

use std::collections::{HashMap, HashSet};

use ash::vk;
use ash::vk::Handle;
use parking_lot::RwLock;

use super::object_names::ObjectNames;
use super::shader_sets::ShaderSets;

#[derive(Clone, Copy, Debug, Default)]
pub struct AttachmentInfo {
    pub format: vk::Format,
    pub samples: vk::SampleCountFlags,
    pub load_op: vk::AttachmentLoadOp,
    pub store_op: vk::AttachmentStoreOp,
}

#[derive(Clone, Debug, Default)]
pub struct RenderPassInfo {
    pub attachments: Vec<AttachmentInfo>,
    /// Per subpass; 0 outside multiview.
    pub view_masks: Vec<u32>,
}

impl RenderPassInfo {
    pub fn view_mask(&self, subpass: u32) -> u32 {
        self.view_masks.get(subpass as usize).copied().unwrap_or(0)
    }

    /// The first color and the first depth/stencil attachment's formats.
    pub fn formats(&self) -> (vk::Format, vk::Format) {
        let color = self
            .attachments
            .iter()
            .find(|a| !is_depth_stencil(a.format));
        let depth = self.attachments.iter().find(|a| is_depth_stencil(a.format));
        (
            color.map_or(vk::Format::UNDEFINED, |a| a.format),
            depth.map_or(vk::Format::UNDEFINED, |a| a.format),
        )
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct ImageInfo {
    pub format: vk::Format,
    pub samples: vk::SampleCountFlags,
}

pub fn is_depth_stencil(format: vk::Format) -> bool {
    matches!(
        format,
        vk::Format::D16_UNORM
            | vk::Format::X8_D24_UNORM_PACK32
            | vk::Format::D32_SFLOAT
            | vk::Format::S8_UINT
            | vk::Format::D16_UNORM_S8_UINT
            | vk::Format::D24_UNORM_S8_UINT
            | vk::Format::D32_SFLOAT_S8_UINT
    )
}

/// Number of views of a view mask (1 without multiview).
pub fn views(view_mask: u32) -> u32 {
    view_mask.count_ones().max(1)
}

pub struct Objects {
    /// The sets of shader objects draws were recorded with.
    pub shader_sets: ShaderSets,
    render_passes: RwLock<HashMap<u64, RenderPassInfo>>,
    images: RwLock<HashMap<u64, ImageInfo>>,
    /// Image views, with their view format and their image's samples.
    views: RwLock<HashMap<u64, ImageInfo>>,
    /// Swapchains: their image format and, once the application asked, their images.
    swapchains: RwLock<HashMap<u64, (vk::Format, Vec<vk::Image>)>>,
    /// The application's pipeline statistics query pools (its queries of that type must
    /// not overlap the layer's: see `record::command_trace::counted`).
    statistics_pools: RwLock<HashSet<u64>>,
    /// Per queue family, whether each of its VK_KHR_performance_query counters (by index)
    /// is of command-buffer scope (where the application enabled the extension).
    counter_scopes: RwLock<HashMap<u32, Vec<bool>>>,
    /// The application's performance query pools with a counter of command-buffer scope:
    /// their queries must be a command buffer's first and last commands.
    command_buffer_scope_pools: RwLock<HashSet<u64>>,
}

impl Objects {
    /// `names`: the device's object names, where new shader sets are announced.
    pub fn new(names: ObjectNames) -> Objects {
        Objects {
            shader_sets: ShaderSets::new(names),
            render_passes: RwLock::default(),
            images: RwLock::default(),
            views: RwLock::default(),
            swapchains: RwLock::default(),
            statistics_pools: RwLock::default(),
            counter_scopes: RwLock::default(),
            command_buffer_scope_pools: RwLock::default(),
        }
    }

    /// Queue family `family`'s counters: whether each is of command-buffer scope.
    pub fn set_counter_scopes(&self, family: u32, command_buffer: Vec<bool>) {
        self.counter_scopes.write().insert(family, command_buffer);
    }

    /// An application's performance query pool of `family`'s `counters` (indices).
    pub fn add_performance_pool(&self, pool: vk::QueryPool, family: u32, counters: &[u32]) {
        let scopes = self.counter_scopes.read();
        let command_buffer = scopes.get(&family).is_some_and(|s| {
            counters
                .iter()
                .any(|&c| s.get(c as usize).copied().unwrap_or(false))
        });
        if command_buffer {
            self.command_buffer_scope_pools
                .write()
                .insert(pool.as_raw());
        }
    }

    /// Whether `pool` is an application's performance query pool with a counter of
    /// command-buffer scope.
    pub fn is_command_buffer_scope_pool(&self, pool: vk::QueryPool) -> bool {
        self.command_buffer_scope_pools
            .read()
            .contains(&pool.as_raw())
    }

    pub fn add_statistics_pool(&self, pool: vk::QueryPool) {
        self.statistics_pools.write().insert(pool.as_raw());
    }

    pub fn remove_query_pool(&self, pool: vk::QueryPool) {
        self.statistics_pools.write().remove(&pool.as_raw());
        self.command_buffer_scope_pools
            .write()
            .remove(&pool.as_raw());
    }

    /// Whether `pool` is one of the application's pipeline statistics query pools.
    pub fn is_statistics_pool(&self, pool: vk::QueryPool) -> bool {
        self.statistics_pools.read().contains(&pool.as_raw())
    }

    pub fn add_render_pass(&self, pass: vk::RenderPass, info: RenderPassInfo) {
        self.render_passes.write().insert(pass.as_raw(), info);
    }

    pub fn remove_render_pass(&self, pass: vk::RenderPass) {
        self.render_passes.write().remove(&pass.as_raw());
    }

    pub fn render_pass<R>(
        &self,
        pass: vk::RenderPass,
        f: impl FnOnce(&RenderPassInfo) -> R,
    ) -> Option<R> {
        self.render_passes.read().get(&pass.as_raw()).map(f)
    }

    pub fn add_image(&self, image: vk::Image, info: ImageInfo) {
        self.images.write().insert(image.as_raw(), info);
    }

    pub fn remove_image(&self, image: vk::Image) {
        self.images.write().remove(&image.as_raw());
    }

    pub fn add_view(&self, view: vk::ImageView, image: vk::Image, format: vk::Format) {
        let samples = self.image(image).samples;
        self.views
            .write()
            .insert(view.as_raw(), ImageInfo { format, samples });
    }

    pub fn remove_view(&self, view: vk::ImageView) {
        self.views.write().remove(&view.as_raw());
    }

    pub fn view_format(&self, view: vk::ImageView) -> vk::Format {
        self.views
            .read()
            .get(&view.as_raw())
            .map_or(vk::Format::UNDEFINED, |v| v.format)
    }

    pub fn view_samples(&self, view: vk::ImageView) -> vk::SampleCountFlags {
        self.views
            .read()
            .get(&view.as_raw())
            .map_or(vk::SampleCountFlags::TYPE_1, |v| v.samples)
    }

    pub fn add_swapchain(&self, swapchain: vk::SwapchainKHR, format: vk::Format) {
        self.swapchains
            .write()
            .insert(swapchain.as_raw(), (format, Vec::new()));
    }

    /// The images of a swapchain, as `vkGetSwapchainImagesKHR` returned them.
    pub fn add_swapchain_images(&self, swapchain: vk::SwapchainKHR, images: &[vk::Image]) {
        let mut swapchains = self.swapchains.write();
        let Some((format, known)) = swapchains.get_mut(&swapchain.as_raw()) else {
            return;
        };
        let info = ImageInfo {
            format: *format,
            samples: vk::SampleCountFlags::TYPE_1,
        };
        let mut map = self.images.write();
        for &image in images {
            map.insert(image.as_raw(), info);
            if !known.contains(&image) {
                known.push(image);
            }
        }
    }

    pub fn remove_swapchain(&self, swapchain: vk::SwapchainKHR) {
        if let Some((_, images)) = self.swapchains.write().remove(&swapchain.as_raw()) {
            let mut map = self.images.write();
            for image in images {
                map.remove(&image.as_raw());
            }
        }
    }

    /// What is known of `image` (defaults for images the layer did not see created).
    pub fn image(&self, image: vk::Image) -> ImageInfo {
        self.images
            .read()
            .get(&image.as_raw())
            .copied()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_views() {
        let pass = RenderPassInfo {
            attachments: vec![
                AttachmentInfo {
                    format: vk::Format::D32_SFLOAT,
                    ..Default::default()
                },
                AttachmentInfo {
                    format: vk::Format::R8G8B8A8_UNORM,
                    ..Default::default()
                },
            ],
            view_masks: vec![0b101],
        };
        assert_eq!(
            pass.formats(),
            (vk::Format::R8G8B8A8_UNORM, vk::Format::D32_SFLOAT)
        );
        assert_eq!(views(pass.view_mask(0)), 2);
        assert_eq!(views(pass.view_mask(7)), 1);
    }
}
