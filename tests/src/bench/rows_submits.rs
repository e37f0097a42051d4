//! The submission rows of each command buffer kind, each command buffer holding a render
//! pass with one draw of a visible triangle (so that the command buffer and render pass
//! mode traces two ranges in each): a stream of distinct reusable command buffers, one
//! reusable command buffer resubmitted once it completed (and, on the sides without the
//! layer, the same with a watched timeline signal: the driver's floor for a tool that
//! learns completion), a simultaneous-use one submitted many times at once, and one-time
//! primaries executing a reusable secondary.

use std::sync::atomic::{AtomicBool, Ordering};

use ash::vk;

use super::rows::SUBMITS;
use super::side::Side;
use super::stats::Series;
use crate::vk::Result;

/// One side's command buffers of these rows, recorded once (the primaries executing the
/// secondary are recorded again each round, untimed).
pub struct SubmitKinds {
    stream: Vec<vk::CommandBuffer>,
    one: vk::CommandBuffer,
    simultaneous: vk::CommandBuffer,
    secondary: vk::CommandBuffer,
    primaries: Vec<vk::CommandBuffer>,
}

impl SubmitKinds {
    pub fn new(s: &Side) -> Result<SubmitKinds> {
        let stream = s.dev.command_buffers(SUBMITS as u32)?;
        for &cb in &stream {
            record_pass(s, cb, vk::CommandBufferUsageFlags::empty())?;
        }
        let one = s.dev.command_buffers(1)?[0];
        record_pass(s, one, vk::CommandBufferUsageFlags::empty())?;
        let simultaneous = s.dev.command_buffers(1)?[0];
        record_pass(
            s,
            simultaneous,
            vk::CommandBufferUsageFlags::SIMULTANEOUS_USE,
        )?;
        let inheritance = vk::CommandBufferInheritanceInfo::default()
            .render_pass(s.pass)
            .subpass(0)
            .framebuffer(s.fb);
        let usage = vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE;
        let secondary = s.dev.secondary(usage, &inheritance, |cb| {
            s.draw.bind(&s.dev, cb);
            // SAFETY: a secondary continuing the render pass, the pipeline bound.
            unsafe { s.dev.device.cmd_draw(cb, 3, 1, 0, 0) };
        })?;
        Ok(SubmitKinds {
            stream,
            one,
            simultaneous,
            secondary,
            primaries: s.dev.command_buffers(SUBMITS as u32)?,
        })
    }
}

/// Records `cb` with `usage`: the side's render pass with one draw.
fn record_pass(s: &Side, cb: vk::CommandBuffer, usage: vk::CommandBufferUsageFlags) -> Result<()> {
    s.dev.begin(cb, usage)?;
    s.begin_pass(cb);
    // SAFETY: inside the render pass, the pipeline bound.
    unsafe {
        s.dev.device.cmd_draw(cb, 3, 1, 0, 0);
        s.dev.device.cmd_end_render_pass(cb);
    }
    s.dev.end(cb)
}

/// [`SUBMITS`] distinct reusable command buffers, one `vkQueueSubmit` each, the last with
/// a fence: per submission.
pub fn stream(s: &Side, k: &SubmitKinds) -> Result<f64> {
    s.submit_each(&k.stream)
}

/// One reusable command buffer submitted [`SUBMITS`] times, each waited for before the
/// next (it may not be pending twice): per submission, the waits not counted.
pub fn resubmit_one(s: &Side, k: &SubmitKinds) -> Result<f64> {
    let mut times = Series::default();
    for _ in 0..SUBMITS {
        times.push(s.submit_each(&[k.one])?);
    }
    Ok(times.median())
}

/// As [`resubmit_one`], each submission also signalling the side's timeline semaphore while
/// a thread waits on it, as the layer's traceq thread waits on the layer's: without a layer,
/// what the driver charges for learning when each fenced submission completed. (On
/// Lavapipe, whose timelines Mesa's common runtime emulates, that costs several times the
/// submission itself.)
pub fn watched_resubmit_one(s: &Side, k: &SubmitKinds) -> Result<f64> {
    let stop = AtomicBool::new(false);
    let device = s.dev.device.clone();
    let timeline = s.timeline;
    std::thread::scope(|scope| {
        scope.spawn(|| watch(&device, timeline, &stop));
        let mut times = Series::default();
        let mut result = Ok(());
        for _ in 0..SUBMITS {
            match s.submit_each_signalled(&[k.one]) {
                Ok(ns) => times.push(ns),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        result.map(|()| times.median())
    })
}

/// Waits for each next value of `timeline` (in waits of at most 2 ms, so that `stop` is
/// seen soon) until `stop`.
fn watch(device: &ash::Device, timeline: vk::Semaphore, stop: &AtomicBool) {
    let semaphores = [timeline];
    while !stop.load(Ordering::Relaxed) {
        // SAFETY: the side's timeline semaphore outlives this scoped thread.
        let Ok(value) = (unsafe { device.get_semaphore_counter_value(timeline) }) else {
            return;
        };
        let values = [value + 1];
        let wait = vk::SemaphoreWaitInfo::default()
            .semaphores(&semaphores)
            .values(&values);
        // SAFETY: as above; a bounded wait (a timeout is the expected outcome when idle).
        let _ = unsafe { device.wait_semaphores(&wait, 2_000_000) };
    }
}

/// One simultaneous-use command buffer submitted [`SUBMITS`] times at once: per
/// submission (the layer wraps such command buffers untracked: see the docs).
pub fn simultaneous(s: &Side, k: &SubmitKinds) -> Result<f64> {
    s.submit_each(&[k.simultaneous; SUBMITS])
}

/// [`SUBMITS`] one-time primaries, each executing the reusable secondary in the render
/// pass, recorded (untimed) then submitted one per `vkQueueSubmit`: per submission.
pub fn secondaries(s: &Side, k: &SubmitKinds) -> Result<f64> {
    for &cb in &k.primaries {
        s.dev
            .begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        s.begin_pass_with(cb, vk::SubpassContents::SECONDARY_COMMAND_BUFFERS);
        // SAFETY: inside a render pass begun for secondaries; the secondary continues it.
        unsafe {
            s.dev.device.cmd_execute_commands(cb, &[k.secondary]);
            s.dev.device.cmd_end_render_pass(cb);
        }
        s.dev.end(cb)?;
    }
    s.submit_each(&k.primaries)
}
