//! The layer's own allocations on the application's thread, counted by a debug build of the
//! layer (`layer/src/alloc_count.rs`): a one-time command buffer of many traced commands,
//! recorded, submitted and waited for, round after round, and a reusable one recorded once
//! and submitted again twice each round (the second time as soon as the first completed,
//! before traceq read it, with long work of another reusable command buffer in flight: on
//! Lavapipe the GPU saves the last run, elsewhere the resubmission reads it), and
//! [`WIDE`] reusable ones submitted together (more than a batch holds inline), each round
//! waiting until the traceq thread has released its batches (the layer's debug counter
//! says so: their lists and queries are back in the pools). After a few rounds of warm-up
//! the tracepoints and the submissions must allocate nothing; the line this prints says
//! how many allocations each part made.

use ash::vk;

use super::layer_debug::{batches_released, layer_counter, wait_released};
use crate::vk::{check, Buffer, Device, Result};

/// Traced commands per recording (two timestamps each: several chunks).
const COMMANDS: u32 = 1_000;
/// Bytes the long work fills: milliseconds on Lavapipe, in flight at the back-to-back
/// resubmission.
const LONG_FILL: u64 = 16 << 20;
const WARM_UP: u32 = 5;
/// Enough submissions that an allocation every few of them would show (crossbeam's channel,
/// used before, allocated a block per 31 messages).
const ROUNDS: u32 = 62;
/// Command buffers of the wide submission: more than a batch's lists hold in the batch
/// itself (four), so that their heap lists must be recycled.
const WIDE: usize = 6;

pub(super) fn allocations(dev: &Device) -> Result<bool> {
    let counter = layer_counter(c"utrace_debug_allocations_on_this_thread")?;
    let released = batches_released()?;
    // SAFETY: the layer's function, callable from any thread.
    let now = || unsafe { counter() };
    let target = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let big = Buffer::new(dev, LONG_FILL, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cbs = dev.command_buffers(3 + WIDE as u32)?;
    let (cb, reusable, long, wide) = (cbs[0], cbs[1], cbs[2], &cbs[3..]);
    let (fence, long_fence) = (dev.fence()?, dev.fence()?);
    dev.begin(long, vk::CommandBufferUsageFlags::empty())?;
    // SAFETY: `long` is recording; `big` has TRANSFER_DST and `LONG_FILL` bytes.
    unsafe {
        dev.device
            .cmd_fill_buffer(long, big.buffer, 0, LONG_FILL, 7)
    };
    dev.end(long)?;
    for &small in std::iter::once(&reusable).chain(wide) {
        dev.begin(small, vk::CommandBufferUsageFlags::empty())?;
        // SAFETY: `small` is recording; the buffer has TRANSFER_DST and holds 4 bytes at 0.
        unsafe {
            dev.device
                .cmd_fill_buffer(small, target.buffer, 0, 4, 0x0505_0505)
        };
        dev.end(small)?;
    }
    let (mut recording, mut tracepoints, mut submits) = (0u64, 0u64, 0u64);
    let (mut resubmits, mut back_to_back, mut wide_submits) = (0u64, 0u64, 0u64);
    for round in 0..WARM_UP + ROUNDS {
        let before_begin = now();
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        let before_commands = now();
        for _ in 0..COMMANDS {
            // SAFETY: `cb` is recording; the buffer has TRANSFER_DST and holds 4 bytes at 0.
            unsafe {
                dev.device
                    .cmd_fill_buffer(cb, target.buffer, 0, 4, 0x0707_0707)
            };
        }
        let after_commands = now();
        dev.end(cb)?;
        let after_end = now();
        let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cb));
        // SAFETY: a recorded command buffer, not pending; an unsignalled fence.
        let result = unsafe { dev.device.queue_submit(dev.queue, &[submit], fence) };
        let after_submit = now();
        check(result, "vkQueueSubmit")?;
        dev.wait_and_reset(fence)?;
        let again = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&reusable));
        let before_again = now();
        // SAFETY: recorded, not pending (its last run was waited for); an unsignalled fence.
        let result = unsafe { dev.device.queue_submit(dev.queue, &[again], fence) };
        let after_again = now();
        check(result, "vkQueueSubmit")?;
        dev.wait_and_reset(fence)?;
        let busy = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&long));
        // SAFETY: recorded, not pending (waited for last round); an unsignalled fence.
        let result = unsafe { dev.device.queue_submit(dev.queue, &[busy], long_fence) };
        check(result, "vkQueueSubmit")?;
        let before_third = now();
        // SAFETY: as above.
        let result = unsafe { dev.device.queue_submit(dev.queue, &[again], fence) };
        let after_third = now();
        check(result, "vkQueueSubmit")?;
        dev.wait_and_reset(fence)?;
        dev.wait_and_reset(long_fence)?;
        let together = vk::SubmitInfo::default().command_buffers(wide);
        let before_wide = now();
        // SAFETY: recorded, not pending (waited for last round); an unsignalled fence.
        let result = unsafe { dev.device.queue_submit(dev.queue, &[together], fence) };
        let after_wide = now();
        check(result, "vkQueueSubmit")?;
        dev.wait_and_reset(fence)?;
        // The steady state, where the traceq thread keeps up with the application: wait
        // until it released this round's batches (on a loaded machine it may lag by
        // several), their lists and queries back in the pools.
        wait_released(released, 5 * (u64::from(round) + 1))?;
        if round >= WARM_UP {
            tracepoints += after_commands - before_commands;
            recording += (before_commands - before_begin) + (after_end - after_commands);
            submits += after_submit - after_end;
            resubmits += after_again - before_again;
            back_to_back += after_third - before_third;
            wide_submits += after_wide - before_wide;
        }
    }
    eprintln!(
        "utrace-allocations: rounds={ROUNDS} commands={COMMANDS} tracepoints={tracepoints} begin_end={recording} submits={submits} resubmits={resubmits} back_to_back={back_to_back} wide={wide_submits}"
    );
    // SAFETY: the work completed.
    unsafe {
        dev.device.destroy_fence(fence, None);
        dev.device.destroy_fence(long_fence, None);
        dev.device.free_command_buffers(dev.pool, &cbs);
    }
    target.destroy(dev);
    big.destroy(dev);
    Ok(true)
}
