//! Dynamic rendering instances (`vkCmdBeginRendering`/`vkCmdEndRendering`), timed as
//! `render_pass` times classic ones: the start just before the begin and the end just
//! after the end, outside the instance; a resuming begin gets its start just after, and a
//! suspending end its end just before, inside the instance (nothing that does work may be
//! recorded between a suspension and its resumption).

use ash::vk;

use crate::hooks::slice;
use crate::trace::objects::views;
use crate::trace::record::recorder::Recorder;
use crate::trace::tracepoints::CommandTrace;
use crate::trace::tracepoints::*;

/// `start_rendering` for a rendering info.
fn start_rendering(r: &Recorder<'_>, t: &mut CommandTrace, info: &vk::RenderingInfo<'_>) {
    // SAFETY: the application's valid rendering info.
    let (colors, depth) = unsafe {
        (
            slice(info.p_color_attachments, info.color_attachment_count),
            info.p_depth_attachment.as_ref(),
        )
    };
    let first = colors.first().or(depth);
    let format_of = |view: vk::ImageView| r.objects.view_format(view);
    trace_start_rendering(
        r,
        t,
        info.render_area.extent.width,
        info.render_area.extent.height,
        info.color_attachment_count,
        colors
            .first()
            .map_or(vk::Format::UNDEFINED, |a| format_of(a.image_view)),
        depth.map_or(vk::Format::UNDEFINED, |a| format_of(a.image_view)),
        first.map_or(vk::AttachmentLoadOp::DONT_CARE, |a| a.load_op),
        first.map_or(vk::AttachmentStoreOp::DONT_CARE, |a| a.store_op),
        colors.first().map_or(vk::SampleCountFlags::TYPE_1, |a| {
            r.objects.view_samples(a.image_view)
        }),
        u64::from(info.view_mask),
        info.flags,
    );
}

/// # Safety
/// Vulkan's rules for `vkCmdBeginRendering` (and KHR).
pub unsafe extern "system" fn cmd_begin_rendering(
    cb: vk::CommandBuffer,
    p_info: *const vk::RenderingInfo<'_>,
) {
    let dev = device_or!(cb);
    let Some(next) = dev.dispatch.ext.cmd_begin_rendering else {
        return;
    };
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb, p_info) };
    let Some(tracer) = dev.tracer.as_ref() else {
        return call();
    };
    // SAFETY: a valid rendering info.
    let info = unsafe { &*p_info };
    let resuming = info.flags.contains(vk::RenderingFlags::RESUMING);
    let enter = |t: &mut CommandTrace| {
        t.enter_subpass(
            views(info.view_mask),
            info.flags
                .contains(vk::RenderingFlags::CONTENTS_SECONDARY_COMMAND_BUFFERS),
        );
        t.suspending = info.flags.contains(vk::RenderingFlags::SUSPENDING);
    };
    // SAFETY: `cb` is the command buffer of the application's current `vkCmd*` call.
    unsafe {
        tracer.around(
            cb,
            |r, t| {
                if !resuming {
                    // An instance that suspends spans command buffers, which a query
                    // around it cannot: each of its parts is counted inside it (below).
                    if !info.flags.contains(vk::RenderingFlags::SUSPENDING) {
                        t.begin_pass_hardware(r);
                        let secondaries = info
                            .flags
                            .contains(vk::RenderingFlags::CONTENTS_SECONDARY_COMMAND_BUFFERS);
                        t.begin_pass_statistics(r, secondaries, info.view_mask == 0);
                    }
                    start_rendering(r, t, info);
                }
            },
            call,
            |r, t| {
                enter(t);
                if resuming {
                    start_rendering(r, t, info);
                }
                // Each part of an instance (all of one that neither suspends nor resumes)
                // is a range of its command buffer: its queries begin inside it and end
                // before it suspends or ends.
                t.open_pass_statistics();
                t.begin_subpass_statistics(r);
            },
        )
    }
}

/// # Safety
/// Vulkan's rules for `vkCmdEndRendering` (and KHR).
pub unsafe extern "system" fn cmd_end_rendering(cb: vk::CommandBuffer) {
    let dev = device_or!(cb);
    let Some(next) = dev.dispatch.ext.cmd_end_rendering else {
        return;
    };
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb) };
    let Some(tracer) = dev.tracer.as_ref() else {
        return call();
    };
    // SAFETY: `cb` is the command buffer of the application's current `vkCmd*` call.
    unsafe {
        tracer.around(
            cb,
            |r, t| {
                t.end_statistics(r);
                if t.suspending {
                    // The part's end, inside the instance: its range closes here.
                    let before = t.events_len();
                    trace_end_rendering(r, t, true);
                    t.close_pass_statistics(before);
                }
            },
            call,
            |r, t| {
                if t.suspending {
                    t.suspend();
                } else {
                    t.leave_render_pass();
                    let before = t.events_len();
                    trace_end_rendering(r, t, false);
                    t.end_pass_statistics(r);
                    t.close_pass_statistics(before);
                    t.end_pass_hardware(r, before);
                }
            },
        )
    }
}
