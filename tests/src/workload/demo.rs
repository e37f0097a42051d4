//! The main job (`--scenario demo`, what `scripts/demo.sh` traces): compute, transfers and
//! draws in two batches a frame, presented when there is a window.

use ash::vk;

use super::{clear, report_check, WORDS};
use crate::submitter::Submitter;
use crate::vk::{verify_fill, Buffer, Device, FillPipeline, Instance, Result};
use crate::window::Swapchain;

/// The main job: per frame a one-time command buffer (dispatch + fill) and a reusable one
/// (copy + update) in one batch, then a second batch through `vkQueueSubmit2` that draws
/// into an offscreen image, blits it to the swapchain image and presents it (without a
/// window: the draws alone, and no present, so every submission stays in frame 0).
pub(super) fn demo(
    inst: &Instance,
    dev: &Device,
    swapchain: Option<&Swapchain>,
    sub: &mut Submitter,
    frames: u32,
) -> Result<bool> {
    const COPY: u64 = 1 << 20;
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let big = Buffer::new(dev, 16 << 20, vk::BufferUsageFlags::TRANSFER_DST)?;
    let src = Buffer::new(dev, COPY, vk::BufferUsageFlags::TRANSFER_SRC)?;
    let dst = Buffer::new(dev, COPY, vk::BufferUsageFlags::TRANSFER_DST)?;
    let pipeline = FillPipeline::new(dev, &data)?;
    let d = &dev.device;

    let copy_cb = dev.command_buffers(1)?[0];
    dev.begin(copy_cb, vk::CommandBufferUsageFlags::empty())?;
    let region = vk::BufferCopy::default().size(COPY);
    let after_copy = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
    // SAFETY: `copy_cb` is recording; the buffers have the usages the commands need.
    unsafe {
        d.cmd_copy_buffer(copy_cb, src.buffer, dst.buffer, &[region]);
        d.cmd_pipeline_barrier(
            copy_cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[after_copy],
            &[],
            &[],
        );
        d.cmd_update_buffer(copy_cb, dst.buffer, 0, &[7u8; 256]);
    }
    dev.end(copy_cb)?;

    // The scene: two draws into an offscreen image, shown by a blit to the swapchain.
    let target = crate::gpu_work::scene_target::SceneTarget::new(dev, true)?;
    let labels = ash::ext::debug_utils::Device::new(&inst.instance, d);
    // Names shown by Perfetto on the stages of these objects.
    // SAFETY: live objects of this device; VK_EXT_debug_utils is enabled on the instance.
    unsafe {
        labels
            .set_debug_utils_object_name(
                &vk::DebugUtilsObjectNameInfoEXT::default()
                    .object_handle(copy_cb)
                    .object_name(c"copy and update"),
            )
            .map_err(|e| format!("vkSetDebugUtilsObjectNameEXT: {e}"))?;
        labels
            .set_debug_utils_object_name(
                &vk::DebugUtilsObjectNameInfoEXT::default()
                    .object_handle(target.pass)
                    .object_name(c"scene pass"),
            )
            .map_err(|e| format!("vkSetDebugUtilsObjectNameEXT: {e}"))?;
        labels
            .set_debug_utils_object_name(
                &vk::DebugUtilsObjectNameInfoEXT::default()
                    .object_handle(dev.queue)
                    .object_name(c"demo queue"),
            )
            .map_err(|e| format!("vkSetDebugUtilsObjectNameEXT: {e}"))?;
        // The compute pipeline is named, the scene's graphics pipeline is not: a trace shows
        // both a pipeline with its name and one with its handle alone.
        labels
            .set_debug_utils_object_name(
                &vk::DebugUtilsObjectNameInfoEXT::default()
                    .object_handle(pipeline.pipeline)
                    .object_name(c"fill compute"),
            )
            .map_err(|e| format!("vkSetDebugUtilsObjectNameEXT: {e}"))?;
    }
    let label = |cb, name: &std::ffi::CStr| {
        // SAFETY: `cb` is recording; VK_EXT_debug_utils is enabled on the instance.
        unsafe {
            labels.cmd_begin_debug_utils_label(
                cb,
                &vk::DebugUtilsLabelEXT::default().label_name(name),
            )
        }
    };
    // SAFETY: closes the label opened last in `cb`.
    let end_label = |cb| unsafe { labels.cmd_end_debug_utils_label(cb) };

    let mut ok = true;
    for f in 0..frames {
        let work = dev.command_buffers(1)?[0];
        dev.begin(work, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        label(work, c"simulate");
        pipeline.record(dev, work, 100 + f, WORDS);
        end_label(work);
        label(work, c"upload");
        // SAFETY: `work` is recording; `big` has TRANSFER_DST.
        unsafe { d.cmd_fill_buffer(work, big.buffer, 0, vk::WHOLE_SIZE, f) };
        end_label(work);
        dev.end(work)?;
        clear(&data);
        sub.submit(&format!("frame-{f}-work"), &[work, copy_cb], None)?;
        ok &= report_check(verify_fill(&data, 100 + f, WORDS));

        let show = dev.command_buffers(1)?[0];
        dev.begin(show, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        label(show, c"scene");
        let begin = target.begin_info();
        // SAFETY: `show` is recording; the pipeline was made for this render pass.
        unsafe {
            d.cmd_begin_render_pass(show, &begin, vk::SubpassContents::INLINE);
            target.pipeline.bind(dev, show);
            d.cmd_draw(show, 3, 1, 0, 0);
            d.cmd_draw(show, 3, 2, 0, 0);
            d.cmd_end_render_pass(show);
        }
        end_label(show);
        match swapchain {
            Some(sc) => {
                let index = sc.acquire()?;
                label(show, c"present");
                sc.record_blit(
                    dev,
                    show,
                    index,
                    target.color.image,
                    crate::gpu_work::graphics::SIZE,
                );
                end_label(show);
                dev.end(show)?;
                let sync = Some((
                    sc.acquired,
                    vk::PipelineStageFlags::TRANSFER,
                    sc.rendered[index as usize],
                ));
                sub.submit2(&format!("frame-{f}-present"), &[show], sync)?;
                sc.present(dev, index)?;
                // Frames are counted at vkQueuePresentKHR, as the layer counts them.
                sub.frame += 1;
            }
            None => {
                dev.end(show)?;
                sub.submit2(&format!("frame-{f}-show"), &[show], None)?;
            }
        }
        // SAFETY: both submissions completed.
        unsafe { d.free_command_buffers(dev.pool, &[work, show]) };
        if f == 0 {
            // The first frame's work done, its pipelines compiled by the driver.
            super::frames_begin();
        }
    }
    target.destroy(dev);
    // SAFETY: all work completed.
    unsafe { d.free_command_buffers(dev.pool, &[copy_cb]) };
    pipeline.destroy(dev);
    for b in [data, big, src, dst] {
        b.destroy(dev);
    }
    eprintln!(
        "utrace-workload: demo: {} frames, {} submissions (labels, dispatches, fills, copies, updates, a render pass with draws{})",
        frames,
        sub.log.len(),
        if swapchain.is_some() {
            ", presents"
        } else {
            ""
        }
    );
    Ok(ok)
}
