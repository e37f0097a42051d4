//! The measured work of each row, on one side: the nanoseconds one command (or one
//! submission) takes, from the application's point of view.

use std::time::Instant;

use ash::vk;

use super::arena::Arena;
use super::side::Side;
use crate::vk::{check, Device, FillPipeline, Result};

/// Commands per recording in the recording rows.
pub const COMMANDS: u32 = 10_000;
/// Command buffers submitted per round in the submission rows.
pub const SUBMITS: usize = 100;
/// Recording threads in the threads row.
pub const THREADS: usize = 8;

/// `vkCmdDraw` inside a render pass, per draw.
pub fn draws(s: &Side) -> Result<f64> {
    draws_into(s, s.cb, None)
}

/// As [`draws`], into `cb`, whose pool's memory is `arena` (if any).
pub fn draws_into(s: &Side, cb: vk::CommandBuffer, arena: Option<&Arena>) -> Result<f64> {
    let d = &s.dev.device;
    record_draws(s, cb, arena, |i| {
        // SAFETY: `cb` is recording inside a render pass with a graphics pipeline bound.
        unsafe { d.cmd_draw(cb, 3, 1, i % 3, 0) };
    })
}

/// Records [`COMMANDS`] of `draw(i)` into `cb`, in a render pass; nanoseconds per draw. An
/// arena behind `cb`'s pool is filled from its start again once `cb` was begun (which freed
/// the last recording's commands).
fn record_draws(
    s: &Side,
    cb: vk::CommandBuffer,
    arena: Option<&Arena>,
    draw: impl Fn(u32),
) -> Result<f64> {
    s.dev
        .begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    if let Some(arena) = arena {
        arena.restart();
    }
    s.begin_pass(cb);
    let t = Instant::now();
    for i in 0..COMMANDS {
        draw(i);
    }
    let ns = t.elapsed().as_nanos() as f64;
    // SAFETY: inside the render pass begun above.
    unsafe { s.dev.device.cmd_end_render_pass(cb) };
    s.dev.end(cb)?;
    Ok(ns / f64::from(COMMANDS))
}

/// `vkCmdDraw` between two `vkCmdWriteTimestamp` (top and bottom of pipe, as the layer writes
/// them) that the benchmark records itself into `pool` (two queries per draw), on a side
/// without the layer: the driver's own floor for a timed draw, which the layer's every-draw
/// mode is compared with. Recorded only, never submitted, into `cb` (whose pool's memory is
/// `arena`).
pub fn hand_timed_draws(
    s: &Side,
    pool: vk::QueryPool,
    cb: vk::CommandBuffer,
    arena: Option<&Arena>,
) -> Result<f64> {
    let d = &s.dev.device;
    record_draws(s, cb, arena, |i| {
        // SAFETY: `cb` is recording inside a render pass with a graphics pipeline bound; the
        // pool holds 2 * COMMANDS timestamp queries.
        unsafe {
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, pool, 2 * i);
            d.cmd_draw(cb, 3, 1, i % 3, 0);
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2 * i + 1);
        }
    })
}

/// A timestamp query pool for [`hand_timed_draws`].
pub fn timed_draw_queries(s: &Side) -> Result<vk::QueryPool> {
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(2 * COMMANDS);
    // SAFETY: a valid create info on a live device.
    let pool = unsafe { s.dev.device.create_query_pool(&info, None) };
    pool.map_err(|e| format!("vkCreateQueryPool: {e}"))
}

/// Render pass instances recorded by [`passes`].
pub const PASSES: u32 = 2_000;

/// Render pass instances of one draw each (begin with the pipeline bound, draw, end), per
/// instance: a counted pass's cost is its draw's query beside the pass's own timestamps.
/// Recorded into `cb`, whose pool's memory is `arena` (Lavapipe allocates each command:
/// from the heap, a pass's time swung by half from round to round).
pub fn passes(s: &Side, cb: vk::CommandBuffer, arena: &Arena) -> Result<f64> {
    s.dev
        .begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    arena.restart();
    let t = Instant::now();
    for i in 0..PASSES {
        s.begin_pass(cb);
        // SAFETY: `cb` is recording inside the render pass just begun, its pipeline bound.
        unsafe {
            s.dev.device.cmd_draw(cb, 3, 1, i % 3, 0);
            s.dev.device.cmd_end_render_pass(cb);
        }
    }
    let ns = t.elapsed().as_nanos() as f64;
    s.dev.end(cb)?;
    Ok(ns / f64::from(PASSES))
}

/// `vkCmdDispatch`, per dispatch.
pub fn dispatches(s: &Side) -> Result<f64> {
    s.dev
        .begin(s.cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    let ns = record_dispatches(s, s.cb);
    s.dev.end(s.cb)?;
    Ok(ns / f64::from(COMMANDS))
}

/// Binds the fill pipeline and records [`COMMANDS`] dispatches; the nanoseconds the
/// dispatches took.
fn record_dispatches(s: &Side, cb: vk::CommandBuffer) -> f64 {
    s.fill.record(&s.dev, cb, 0, 64);
    let t = Instant::now();
    for _ in 0..COMMANDS {
        // SAFETY: `cb` is recording with a compute pipeline and its set bound.
        unsafe { s.dev.device.cmd_dispatch(cb, 1, 1, 1) };
    }
    t.elapsed().as_nanos() as f64
}

/// One-time command buffers of one dispatch, recorded (not timed) then submitted one per
/// `vkQueueSubmit`: per submission.
pub fn small_submits(s: &Side, cbs: &[vk::CommandBuffer]) -> Result<f64> {
    for &cb in cbs {
        s.dev
            .begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        s.fill.record(&s.dev, cb, 0, 64);
        s.dev.end(cb)?;
    }
    s.submit_each(cbs)
}

/// As [`small_submits`], each command buffer's dispatch between two `vkCmdWriteTimestamp`
/// (into `pool`, reset on the host first) and each batch signalling a timeline semaphore:
/// what timing a submission costs the driver, without a layer.
pub fn hand_timed_small_submits(
    s: &Side,
    cbs: &[vk::CommandBuffer],
    pool: vk::QueryPool,
) -> Result<f64> {
    let d = &s.dev.device;
    // SAFETY: the pool's queries are not in use (the last round was waited for).
    unsafe { d.reset_query_pool(pool, 0, 2 * cbs.len() as u32) };
    for (i, &cb) in cbs.iter().enumerate() {
        let i = i as u32;
        s.dev
            .begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        // SAFETY: `cb` is recording; the queries were reset above and are written once.
        unsafe { d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, pool, 2 * i) };
        s.fill.record(&s.dev, cb, 0, 64);
        // SAFETY: as above.
        unsafe {
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2 * i + 1)
        };
        s.dev.end(cb)?;
    }
    s.submit_each_signalled(cbs)
}

/// Reusable command buffers recorded once (by [`record_reusable`]), submitted again each
/// round: per submission.
pub fn recorded_submits(s: &Side, cbs: &[vk::CommandBuffer]) -> Result<f64> {
    s.submit_each(cbs)
}

/// As [`recorded_submits`], each side's round 3 ms after the last (untimed): the
/// application whose frames are milliseconds apart, where the layer's traceq thread (which
/// lets submissions gather for 1 ms once woken) has read the last run of each command
/// buffer before it is submitted again. In [`recorded_submits`] the rounds follow each
/// other within that millisecond, so each resubmission reads its last run itself.
pub fn paced_resubmits(s: &Side, cbs: &[vk::CommandBuffer]) -> Result<f64> {
    std::thread::sleep(std::time::Duration::from_millis(3));
    s.submit_each(cbs)
}

pub fn record_reusable(s: &Side, cbs: &[vk::CommandBuffer]) -> Result<()> {
    for &cb in cbs {
        s.dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
        s.fill.record(&s.dev, cb, 0, 64);
        s.dev.end(cb)?;
    }
    Ok(())
}

/// A command pool of one recording thread's, with its command buffer.
pub struct ThreadPool {
    pool: vk::CommandPool,
    cb: vk::CommandBuffer,
}

impl ThreadPool {
    pub fn new(dev: &Device) -> Result<ThreadPool> {
        let d = &dev.device;
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(dev.family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: valid create info.
        let pool = unsafe { d.create_command_pool(&info, None) };
        let pool = check(pool, "vkCreateCommandPool")?;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: valid allocate info.
        let cbs = unsafe { d.allocate_command_buffers(&alloc) };
        let cb = check(cbs, "vkAllocateCommandBuffers")?[0];
        Ok(ThreadPool { pool, cb })
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: the command buffer was never submitted.
        unsafe { dev.device.destroy_command_pool(self.pool, None) };
    }
}

/// One thread per pool, each recording [`COMMANDS`] dispatches into the pool's command
/// buffer, at once: the CPU time per dispatch, averaged over the threads (contention
/// between threads shows as more CPU time per command, whatever the number of cores).
pub fn threaded_dispatches(s: &Side, pools: &[ThreadPool]) -> Result<f64> {
    let (dev, fill) = (&s.dev, &s.fill);
    let results: Vec<Result<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = pools
            .iter()
            .map(|p| scope.spawn(move || thread_recording(dev, fill, p.cb)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a recording thread panicked".into()))
            })
            .collect()
    });
    let mut total = 0.0;
    for r in results {
        total += r?;
    }
    Ok(total / pools.len() as f64 / f64::from(COMMANDS))
}

/// Records into `cb` (of a pool only this thread uses): the CPU time of the dispatches.
fn thread_recording(dev: &Device, fill: &FillPipeline, cb: vk::CommandBuffer) -> Result<f64> {
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    fill.record(dev, cb, 0, 64);
    let start = thread_cpu_ns();
    for _ in 0..COMMANDS {
        // SAFETY: `cb` is recording with a compute pipeline and its set bound.
        unsafe { dev.device.cmd_dispatch(cb, 1, 1, 1) };
    }
    let spent = thread_cpu_ns() - start;
    dev.end(cb)?;
    Ok(spent as f64)
}

/// CPU time of the calling thread, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
