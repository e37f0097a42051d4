//! Render pass instances (classic; dynamic rendering is `rendering`'s) and the secondary
//! command buffers executed in them.
//!
//! Where each timestamp goes, so that every one is legal:
//! - `start_render_pass`/`start_rendering` just before the begin and `end_*` just after the
//!   end, outside the instance (the range then covers load and store operations);
//! - a resuming `vkCmdBeginRendering` gets its start just after, and a suspending
//!   `vkCmdEndRendering` its end just before, inside the instance: nothing that does work may
//!   be recorded between a suspension and its resumption;
//! - `next_subpass` is written in the subpass that ends.

use ash::vk;
use ash::vk::Handle;

use crate::hooks::slice;
use crate::trace::objects::{views, RenderPassInfo};
use crate::trace::record::recorder::Recorder;
use crate::trace::tracepoints::CommandTrace;
use crate::trace::tracepoints::*;

/// `start_render_pass` for a begin info.
fn start_render_pass(
    r: &Recorder<'_>,
    t: &mut CommandTrace,
    begin: &vk::RenderPassBeginInfo<'_>,
    contents: vk::SubpassContents,
) {
    let info = r
        .objects
        .render_pass(begin.render_pass, RenderPassInfo::clone)
        .unwrap_or_default();
    let (color, depth) = info.formats();
    let first = info.attachments.first().copied().unwrap_or_default();
    trace_start_render_pass(
        r,
        t,
        begin.render_pass.as_raw(),
        begin.framebuffer.as_raw(),
        begin.render_area.extent.width,
        begin.render_area.extent.height,
        info.attachments.len() as u32,
        info.view_masks.len() as u32,
        color,
        depth,
        first.load_op,
        first.store_op,
        first.samples,
        u64::from(info.view_mask(0)),
        contents,
    );
}

/// After a begin or next subpass: the trace follows the subpass.
fn enter_subpass(r: &Recorder<'_>, t: &mut CommandTrace, contents: vk::SubpassContents) {
    let mask = r
        .objects
        .render_pass(t.render_pass, |rp| rp.view_mask(t.subpass))
        .unwrap_or(0);
    t.enter_subpass(
        views(mask),
        contents == vk::SubpassContents::SECONDARY_COMMAND_BUFFERS,
    );
}

/// Both begin commands: `start_render_pass` before, the trace in subpass 0 after.
fn begin_render_pass(
    tracer: &crate::trace::DeviceTracer,
    cb: vk::CommandBuffer,
    begin: &vk::RenderPassBeginInfo<'_>,
    contents: vk::SubpassContents,
    call: impl FnOnce(),
) {
    // SAFETY: `cb` is the command buffer of the application's current `vkCmd*` call.
    unsafe {
        tracer.around(
            cb,
            |r, t| {
                t.begin_pass_hardware(r);
                // One subpass of one view, its contents secondaries: a statistics query
                // may span it (see `begin_pass_statistics`).
                let single = r
                    .objects
                    .render_pass(begin.render_pass, |rp| {
                        rp.view_masks.len() == 1 && rp.view_mask(0) == 0
                    })
                    .unwrap_or(false);
                let secondaries = contents == vk::SubpassContents::SECONDARY_COMMAND_BUFFERS;
                t.begin_pass_statistics(r, secondaries, single);
                start_render_pass(r, t, begin, contents);
            },
            call,
            |r, t| {
                t.render_pass = begin.render_pass;
                t.subpass = 0;
                enter_subpass(r, t, contents);
                t.open_pass_statistics();
                t.begin_subpass_statistics(r);
            },
        )
    }
}

/// # Safety
/// Vulkan's rules for `vkCmdBeginRenderPass`.
pub unsafe extern "system" fn cmd_begin_render_pass(
    cb: vk::CommandBuffer,
    p_begin: *const vk::RenderPassBeginInfo<'_>,
    contents: vk::SubpassContents,
) {
    let dev = device_or!(cb);
    let next = dev.dispatch.fp_v1_0.cmd_begin_render_pass;
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb, p_begin, contents) };
    let Some(tracer) = dev.tracer.as_ref() else {
        return call();
    };
    // SAFETY: a valid begin info.
    begin_render_pass(tracer, cb, unsafe { &*p_begin }, contents, call);
}

/// # Safety
/// Vulkan's rules for `vkCmdBeginRenderPass2` (and KHR).
pub unsafe extern "system" fn cmd_begin_render_pass2(
    cb: vk::CommandBuffer,
    p_begin: *const vk::RenderPassBeginInfo<'_>,
    p_subpass_begin: *const vk::SubpassBeginInfo<'_>,
) {
    let dev = device_or!(cb);
    let Some(next) = dev.dispatch.ext.cmd_begin_render_pass2 else {
        return;
    };
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb, p_begin, p_subpass_begin) };
    let Some(tracer) = dev.tracer.as_ref() else {
        return call();
    };
    // SAFETY: valid begin infos.
    let (begin, contents) = unsafe { (&*p_begin, (*p_subpass_begin).contents) };
    begin_render_pass(tracer, cb, begin, contents, call);
}

fn next_subpass(
    tracer: &crate::trace::DeviceTracer,
    cb: vk::CommandBuffer,
    contents: vk::SubpassContents,
    call: impl FnOnce(),
) {
    // SAFETY: `cb` is the command buffer of the application's current `vkCmd*` call.
    unsafe {
        tracer.around(
            cb,
            |r, t| {
                t.end_statistics(r);
                let subpass = t.subpass + 1;
                trace_next_subpass(r, t, subpass, contents)
            },
            call,
            |r, t| {
                t.subpass += 1;
                enter_subpass(r, t, contents);
                t.begin_subpass_statistics(r);
            },
        )
    }
}

/// # Safety
/// Vulkan's rules for `vkCmdNextSubpass`.
pub unsafe extern "system" fn cmd_next_subpass(
    cb: vk::CommandBuffer,
    contents: vk::SubpassContents,
) {
    let dev = device_or!(cb);
    let next = dev.dispatch.fp_v1_0.cmd_next_subpass;
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb, contents) };
    match dev.tracer.as_ref() {
        None => call(),
        Some(tracer) => next_subpass(tracer, cb, contents, call),
    }
}

/// # Safety
/// Vulkan's rules for `vkCmdNextSubpass2` (and KHR).
pub unsafe extern "system" fn cmd_next_subpass2(
    cb: vk::CommandBuffer,
    p_begin: *const vk::SubpassBeginInfo<'_>,
    p_end: *const vk::SubpassEndInfo<'_>,
) {
    let dev = device_or!(cb);
    let Some(next) = dev.dispatch.ext.cmd_next_subpass2 else {
        return;
    };
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb, p_begin, p_end) };
    match dev.tracer.as_ref() {
        None => call(),
        // SAFETY: a valid subpass begin info.
        Some(tracer) => next_subpass(tracer, cb, unsafe { (*p_begin).contents }, call),
    }
}

fn end_render_pass(
    tracer: &crate::trace::DeviceTracer,
    cb: vk::CommandBuffer,
    call: impl FnOnce(),
) {
    // SAFETY: `cb` is the command buffer of the application's current `vkCmd*` call.
    unsafe {
        tracer.around(
            cb,
            |r, t| t.end_statistics(r),
            call,
            |r, t| {
                t.leave_render_pass();
                let before = t.events_len();
                trace_end_render_pass(r, t);
                t.end_pass_statistics(r);
                t.close_pass_statistics(before);
                t.end_pass_hardware(r, before);
            },
        )
    }
}

/// # Safety
/// Vulkan's rules for `vkCmdEndRenderPass`.
pub unsafe extern "system" fn cmd_end_render_pass(cb: vk::CommandBuffer) {
    let dev = device_or!(cb);
    let next = dev.dispatch.fp_v1_0.cmd_end_render_pass;
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb) };
    match dev.tracer.as_ref() {
        None => call(),
        Some(tracer) => end_render_pass(tracer, cb, call),
    }
}

/// # Safety
/// Vulkan's rules for `vkCmdEndRenderPass2` (and KHR).
pub unsafe extern "system" fn cmd_end_render_pass2(
    cb: vk::CommandBuffer,
    p_end: *const vk::SubpassEndInfo<'_>,
) {
    let dev = device_or!(cb);
    let Some(next) = dev.dispatch.ext.cmd_end_render_pass2 else {
        return;
    };
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb, p_end) };
    match dev.tracer.as_ref() {
        None => call(),
        Some(tracer) => end_render_pass(tracer, cb, call),
    }
}

/// # Safety
/// Vulkan's rules for `vkCmdExecuteCommands`.
pub unsafe extern "system" fn cmd_execute_commands(
    cb: vk::CommandBuffer,
    count: u32,
    p_cbs: *const vk::CommandBuffer,
) {
    let dev = device_or!(cb);
    let next = dev.dispatch.fp_v1_0.cmd_execute_commands;
    // SAFETY: forwarded with the application's arguments.
    let call = || unsafe { next(cb, count, p_cbs) };
    let Some(tracer) = dev.tracer.as_ref() else {
        return call();
    };
    // The secondaries' traces (none unless a recording is instrumented).
    let children = if tracer.recording_in_progress() {
        tracer
            .guarded("vkCmdExecuteCommands", || {
                // SAFETY: the application passes `count` command buffers, executable (not
                // being recorded) for the duration of this call.
                unsafe { slice(p_cbs, count) }
                    .iter()
                    .filter_map(|&s| unsafe { tracer.recorded(s) })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    // SAFETY: `cb` is the command buffer of the application's current `vkCmd*` call.
    unsafe {
        tracer.around(
            cb,
            |r, t| {
                trace_start_execute_commands(r, t, count);
                t.begin_execute_statistics(r);
            },
            call,
            |r, t| {
                for child in children {
                    t.add_child(child);
                }
                t.end_execute_statistics(r);
                let before = t.events_len();
                trace_end_execute_commands(r, t);
                t.close_execute_statistics(r, before);
            },
        )
    }
}
