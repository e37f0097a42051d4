//! The render target of the mesh, shader-object and maintenance scenarios: a 64x64
//! R8G8B8A8 color image drawn with dynamic rendering (cleared to transparent black unless
//! told otherwise), then copied whole into a host-visible buffer so that the host can check
//! every pixel.

use ash::vk;

use crate::gpu_work::graphics::{self, Image, COLOR, SIZE};
use crate::vk::{Buffer, Device, Result};

/// The clear color, as R8G8B8A8_UNORM bytes: no draw writes alpha 0, so a pixel left at
/// this value was never drawn.
pub const CLEAR: [u8; 4] = [0, 0, 0, 0];

/// Mismatching pixels printed before the rest are only counted.
const SHOWN: usize = 5;

pub struct RenderTarget {
    image: Image,
    readback: Buffer,
    /// What `begin` clears the image to.
    clear: [f32; 4],
}

impl RenderTarget {
    /// A target cleared to [`CLEAR`].
    pub fn new(dev: &Device) -> Result<RenderTarget> {
        Self::cleared_to(dev, [0.0; 4])
    }

    /// A target cleared to `clear` (RGBA, 0 to 1).
    pub fn cleared_to(dev: &Device, clear: [f32; 4]) -> Result<RenderTarget> {
        let image = Image::new(
            dev,
            COLOR,
            vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
            vk::SampleCountFlags::TYPE_1,
        )?;
        let readback = match Buffer::new(
            dev,
            u64::from(SIZE * SIZE * 4),
            vk::BufferUsageFlags::TRANSFER_DST,
        ) {
            Ok(b) => b,
            Err(e) => {
                image.destroy(dev);
                return Err(e);
            }
        };
        Ok(RenderTarget {
            image,
            readback,
            clear,
        })
    }

    /// Records the move to COLOR_ATTACHMENT_OPTIMAL and vkCmdBeginRendering of the whole
    /// image (cleared, stored).
    pub fn begin(&self, dev: &Device, cb: vk::CommandBuffer) {
        graphics::transition(
            dev,
            cb,
            self.image.image,
            vk::ImageAspectFlags::COLOR,
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
        );
        let attachments = [vk::RenderingAttachmentInfo::default()
            .image_view(self.image.view)
            .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(vk::ClearValue {
                color: vk::ClearColorValue {
                    float32: self.clear,
                },
            })];
        let info = vk::RenderingInfo::default()
            .render_area(graphics::area())
            .layer_count(1)
            .color_attachments(&attachments);
        // SAFETY: `cb` is recording outside a render pass; dynamic rendering is enabled on
        // every device; the view is in the layout named.
        unsafe { dev.device.cmd_begin_rendering(cb, &info) };
    }

    /// Records vkCmdEndRendering, then the copy of the whole image into the host-visible
    /// buffer and the barrier that makes it visible to host reads.
    pub fn finish(&self, dev: &Device, cb: vk::CommandBuffer) {
        self.end_and_copy(dev, cb);
        host_barrier(dev, cb);
    }

    /// As [`Self::finish`] without the barrier (for a caller that records its own).
    pub fn end_and_copy(&self, dev: &Device, cb: vk::CommandBuffer) {
        // SAFETY: `cb` is recording inside the render pass instance begun by `begin`.
        unsafe { dev.device.cmd_end_rendering(cb) };
        graphics::transition(
            dev,
            cb,
            self.image.image,
            vk::ImageAspectFlags::COLOR,
            vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        );
        graphics::copy_to_buffer(dev, cb, self.image.image, self.readback.buffer);
    }

    /// Pixel (x, y) of the last readback (call once the submission finished).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let at = ((y * SIZE + x) * 4) as usize;
        // SAFETY: the mapping covers SIZE * SIZE * 4 bytes and stays mapped while self
        // lives; the GPU work that wrote it completed.
        let bytes = unsafe { std::slice::from_raw_parts(self.readback.mapped.add(at), 4) };
        [bytes[0], bytes[1], bytes[2], bytes[3]]
    }

    /// Whether every pixel holds what `expected(x, y)` says; pixels it says nothing about
    /// (None) are not checked. Mismatches are printed on stderr under `what`.
    pub fn check(&self, what: &str, expected: impl Fn(u32, u32) -> Option<[u8; 4]>) -> bool {
        self.check_within(what, 0, expected)
    }

    /// As [`Self::check`], each channel allowed to be off by up to `tolerance` (the
    /// driver's rounding of colours that are not whole bytes).
    pub fn check_within(
        &self,
        what: &str,
        tolerance: u8,
        expected: impl Fn(u32, u32) -> Option<[u8; 4]>,
    ) -> bool {
        let mut wrong = 0usize;
        for y in 0..SIZE {
            for x in 0..SIZE {
                let Some(want) = expected(x, y) else { continue };
                let got = self.pixel(x, y);
                if got
                    .iter()
                    .zip(want)
                    .any(|(&g, w)| g.abs_diff(w) > tolerance)
                {
                    if wrong < SHOWN {
                        eprintln!(
                            "utrace-workload: {what}: pixel ({x}, {y}) is {got:?}, expected {want:?}"
                        );
                    }
                    wrong += 1;
                }
            }
        }
        if wrong > 0 {
            eprintln!("utrace-workload: {what}: {wrong} pixels wrong");
        }
        wrong == 0
    }

    pub fn destroy(self, dev: &Device) {
        self.image.destroy(dev);
        self.readback.destroy(dev);
    }
}

/// Makes every earlier write of the command buffer visible to host reads after the fence.
pub fn host_barrier(dev: &Device, cb: vk::CommandBuffer) {
    let barriers = [vk::MemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
        .src_access_mask(vk::AccessFlags2::MEMORY_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::HOST)
        .dst_access_mask(vk::AccessFlags2::HOST_READ)];
    let info = vk::DependencyInfo::default().memory_barriers(&barriers);
    // SAFETY: `cb` is recording outside a render pass; synchronization2 is enabled (both
    // scenarios' devices ask for it).
    unsafe { dev.device.cmd_pipeline_barrier2(cb, &info) };
}
