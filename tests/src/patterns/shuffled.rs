//! Reusable command buffers resubmitted in an order that changes every few frames, while
//! some are recorded again, freed and replaced (drivers often hand the same handle back),
//! or reset with their pool. The layer finds a resubmitted command buffer's trace in its
//! queue's order of submissions (the command buffer that followed the last one the time
//! before): that must never give a batch an older recording. Each recording fills
//! `4 * id` bytes, its id new, so a batch's fill sizes name the recordings it ran; each
//! submission's label lists their ids (`shuffled-<frame>:<id>,<id>,...`).

use ash::vk;

use super::{allocate, pool};
use crate::submitter::Submitter;
use crate::vk::{check, Buffer, Device, Result};

/// Command buffers resubmitted each frame.
const CBS: usize = 6;
/// Each command buffer fills a region of its own (so that those submitted together do not
/// write the same bytes), from its start: at most 4,096 recordings.
const REGION: u64 = 16 * 1024;

/// One command buffer and the id of its recording.
#[derive(Clone, Copy)]
struct Recorded {
    cb: vk::CommandBuffer,
    id: u32,
}

/// Records `cb`, the command buffer of region `k`, as recording `id`.
fn record(
    dev: &Device,
    (cb, k): (vk::CommandBuffer, usize),
    buffer: &Buffer,
    id: u32,
) -> Result<Recorded> {
    dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
    let offset = k as u64 * REGION;
    // SAFETY: `cb` is recording; the buffer has TRANSFER_DST and holds CBS regions.
    unsafe {
        dev.device
            .cmd_fill_buffer(cb, buffer.buffer, offset, 4 * u64::from(id), id)
    };
    dev.end(cb)?;
    Ok(Recorded { cb, id })
}

/// The order of frame `i`: the same for four frames, then rotated, every other time
/// reversed.
fn order(i: u32) -> Vec<usize> {
    let block = (i / 4) as usize;
    let mut order: Vec<usize> = (0..CBS).map(|k| (k + block) % CBS).collect();
    if block % 2 == 1 {
        order.reverse();
    }
    order
}

/// `frames` frames of the six command buffers: all in one `vkQueueSubmit` on even frames,
/// one each on odd ones. Every fifth frame one is recorded again, every ninth one is freed
/// and a new one allocated, every seventeenth the pool is reset and all are recorded again.
pub(super) fn shuffled(dev: &Device, sub: &mut Submitter, frames: u32) -> Result<bool> {
    let d = &dev.device;
    let buffer = Buffer::new(dev, CBS as u64 * REGION, vk::BufferUsageFlags::TRANSFER_DST)?;
    let pool = pool(dev)?;
    let mut next_id = 1;
    let mut new_id = || {
        next_id += 1;
        next_id
    };
    let mut cbs = Vec::with_capacity(CBS);
    for (k, cb) in allocate(dev, pool, CBS as u32)?.into_iter().enumerate() {
        cbs.push(record(dev, (cb, k), &buffer, new_id())?);
    }
    for i in 0..frames {
        let k = i as usize % CBS;
        if i % 17 == 16 {
            // SAFETY: every submission completed (the submitter waits for each).
            let reset = unsafe { d.reset_command_pool(pool, vk::CommandPoolResetFlags::empty()) };
            check(reset, "vkResetCommandPool")?;
            for (k, r) in cbs.iter_mut().enumerate() {
                *r = record(dev, (r.cb, k), &buffer, new_id())?;
            }
        } else if i % 9 == 8 {
            // SAFETY: as above.
            unsafe { d.free_command_buffers(pool, &[cbs[k].cb]) };
            let cb = allocate(dev, pool, 1)?[0];
            cbs[k] = record(dev, (cb, k), &buffer, new_id())?;
        } else if i % 5 == 4 {
            cbs[k] = record(dev, (cbs[k].cb, k), &buffer, new_id())?;
        }
        let submitted: Vec<Recorded> = order(i).into_iter().map(|k| cbs[k]).collect();
        let groups: Vec<&[Recorded]> = if i % 2 == 0 {
            vec![&submitted]
        } else {
            submitted.chunks(1).collect()
        };
        for group in groups {
            let ids: Vec<String> = group.iter().map(|r| r.id.to_string()).collect();
            let handles: Vec<vk::CommandBuffer> = group.iter().map(|r| r.cb).collect();
            sub.submit(&format!("shuffled-{i}:{}", ids.join(",")), &handles, None)?;
        }
    }
    // SAFETY: every submission completed.
    unsafe { d.destroy_command_pool(pool, None) };
    buffer.destroy(dev);
    Ok(true)
}
