//! A reusable command buffer resubmitted while its recording changes: re-recorded every ten
//! frames (alternating two shapes of work), its pool reset, the command buffer freed and a
//! new one allocated (drivers often hand the same handle back), with a simultaneous-use
//! command buffer pending twice now and then. The layer keeps its copy command buffers per
//! recording: each must follow the recording it was made for.

use ash::vk;

use super::{first_word, pool, record_transfer};
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, Result};

/// Records `cb` for frame `i`'s shape: the full transfer (fill, update: six events) on
/// even tens, a fill alone (four events) on odd ones; either leaves `value` first.
fn record(dev: &Device, cb: vk::CommandBuffer, buffer: &Buffer, i: u32) -> Result<()> {
    dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
    if (i / 10) % 2 == 0 {
        record_transfer(dev, cb, buffer, i);
    } else {
        // SAFETY: `cb` is recording; the buffer has TRANSFER_DST and is 4 KiB.
        unsafe { dev.device.cmd_fill_buffer(cb, buffer.buffer, 0, 4096, i) };
    }
    dev.end(cb)
}

fn allocate(dev: &Device, pool: vk::CommandPool) -> Result<vk::CommandBuffer> {
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(1);
    // SAFETY: valid allocate info.
    let cbs = check(
        unsafe { dev.device.allocate_command_buffers(&info) },
        "vkAllocateCommandBuffers",
    )?;
    Ok(cbs[0])
}

/// `frames` submissions of one reusable command buffer (labels `rerecord-<i>`), recorded
/// anew every ten frames, its pool reset at every fiftieth, freed and replaced halfway;
/// every 25th frame a simultaneous-use command buffer is also submitted twice before either
/// run is waited for (`pending-<i>-1`, `-2`).
pub(super) fn rerecord(dev: &Device, sub: &mut Submitter, frames: u32) -> Result<bool> {
    let d = &dev.device;
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let other = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let pool = pool(dev)?;
    let mut cb = allocate(dev, pool)?;
    let twice = dev.command_buffers(1)?[0];
    dev.begin(twice, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
    record_transfer(dev, twice, &other, 0x77);
    dev.end(twice)?;
    let fences = [dev.fence()?, dev.fence()?];
    let mut last = 0;
    for i in 0..frames {
        if i == frames / 2 {
            // SAFETY: every submission of `cb` completed (each was waited for).
            unsafe { d.free_command_buffers(pool, &[cb]) };
            cb = allocate(dev, pool)?;
            record(dev, cb, &buffer, i)?;
            last = i;
        } else if i % 50 == 49 {
            // SAFETY: as above: nothing of the pool is pending.
            let reset = unsafe { d.reset_command_pool(pool, vk::CommandPoolResetFlags::empty()) };
            check(reset, "vkResetCommandPool")?;
            record(dev, cb, &buffer, i)?;
            last = i;
        } else if i % 10 == 0 {
            record(dev, cb, &buffer, i)?;
            last = i;
        }
        sub.submit(&format!("rerecord-{i}"), &[cb], None)?;
        if i % 25 == 24 {
            let mut before = [0u64; 2];
            for (k, &fence) in fences.iter().enumerate() {
                let info = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&twice));
                before[k] = monotonic_ns();
                // SAFETY: a recorded simultaneous-use command buffer; unsignalled fences.
                let r = unsafe { d.queue_submit(dev.queue, &[info], fence) };
                check(r, "vkQueueSubmit")?;
            }
            for (k, &fence) in fences.iter().enumerate() {
                dev.wait_and_reset(fence)?;
                sub.note(
                    &format!("pending-{i}-{}", k + 1),
                    &[twice],
                    before[k],
                    monotonic_ns(),
                );
            }
        }
    }
    // The simultaneous-use command buffer runs every 25th frame: not at all in fewer.
    let other_ran = frames >= 25;
    let ok = first_word(&buffer) == last && (!other_ran || first_word(&other) == 0x77);
    // SAFETY: every submission completed.
    unsafe {
        for f in fences {
            d.destroy_fence(f, None);
        }
        d.free_command_buffers(dev.pool, &[twice]);
        d.destroy_command_pool(pool, None);
    }
    buffer.destroy(dev);
    other.destroy(dev);
    Ok(ok)
}

/// How many events the command buffer submitted at frame `i` of [`rerecord`] holds.
pub fn rerecord_events(frames: u32, i: u32) -> usize {
    // The recording in use at frame i was made at the last frame that recorded.
    let recorded_at = (0..=i)
        .rev()
        .find(|&j| j == frames / 2 || j % 50 == 49 || j % 10 == 0)
        .unwrap_or(0);
    if (recorded_at / 10) % 2 == 0 {
        6
    } else {
        4
    }
}
