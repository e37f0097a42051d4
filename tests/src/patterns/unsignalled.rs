//! One-time command buffers submitted without a fence or a semaphore: the layer leaves
//! their completion signal to a later submission (or to the host, once the application
//! waited for the queue to go idle), and every batch must still be timed, in order.

use ash::vk;

use super::{first_word, record_transfer, transfer_barrier};
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, Result};

/// Submissions without a fence in the first burst: more than the layer lets wait for one
/// signal (15), so that one of them has to signal on its own.
const BURST: usize = 20;

pub(super) fn unsignalled(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cbs = dev.command_buffers(BURST as u32 + 1)?;
    let fence = dev.fence()?;
    let mut value = 0;
    let mut phase = |label: &str, count: usize, fenced: bool, wait: &dyn Fn() -> Result<()>| {
        let mut started = Vec::new();
        for (i, &cb) in cbs[..count].iter().enumerate() {
            value += 1;
            let last = i + 1 == count;
            let fence = if fenced && last {
                fence
            } else {
                vk::Fence::null()
            };
            started.push(submit_one(dev, cb, &buffer, value, fence)?);
        }
        wait()?;
        let after = monotonic_ns();
        for (i, (&cb, before)) in cbs.iter().zip(started).enumerate() {
            sub.note(&format!("{label}-{i}"), &[cb], before, after);
        }
        Ok::<u32, String>(value)
    };
    // A burst ended by a fence, then batches followed by the application's idle waits.
    phase("burst", BURST + 1, true, &|| dev.wait_and_reset(fence))?;
    phase("queue-idle", 3, false, &|| {
        // SAFETY: the device's queue, used by this thread only.
        check(unsafe { d.queue_wait_idle(dev.queue) }, "vkQueueWaitIdle")
    })?;
    phase("device-idle", 2, false, &|| {
        // SAFETY: a live device whose queue only this thread uses.
        check(unsafe { d.device_wait_idle() }, "vkDeviceWaitIdle")
    })?;
    // Batches followed by a submission of nothing but a fence, which the application waits
    // for: the layer signals in it.
    let last = phase("fence-only", 2, false, &|| {
        check(
            // SAFETY: an empty submission with an unsignalled fence.
            unsafe { d.queue_submit(dev.queue, &[], fence) },
            "vkQueueSubmit",
        )?;
        dev.wait_and_reset(fence)
    })?;
    let ok = first_word(&buffer) == last;
    // SAFETY: everything completed.
    unsafe {
        d.destroy_fence(fence, None);
        d.free_command_buffers(dev.pool, &cbs);
    }
    buffer.destroy(dev);
    Ok(ok)
}

/// One batch without a fence, never waited for: only for a run that exits right after it
/// with the device alive (`--exit-without-destroy`), whose trace must not wait for a signal
/// that nothing will send.
pub(super) fn unsignalled_at_exit(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cb = dev.command_buffers(1)?[0];
    let before = submit_one(dev, cb, &buffer, 1, vk::Fence::null())?;
    sub.note("never-waited", &[cb], before, monotonic_ns());
    // The buffer and command buffer stay (nothing destroys them): the process exits with
    // its device alive.
    let _ = buffer;
    Ok(true)
}

/// Records `cb` (one-time) writing `value` into `buffer` and submits it alone with `fence`;
/// the time just before the submission.
fn submit_one(
    dev: &Device,
    cb: vk::CommandBuffer,
    buffer: &Buffer,
    value: u32,
    fence: vk::Fence,
) -> Result<u64> {
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    // Submissions without a fence overlap: each one's writes follow the last one's.
    transfer_barrier(dev, cb);
    record_transfer(dev, cb, buffer, value);
    dev.end(cb)?;
    let before = monotonic_ns();
    let info = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cb));
    check(
        // SAFETY: a recorded command buffer not pending (each phase waited for the last);
        // an unsignalled fence or none.
        unsafe { dev.device.queue_submit(dev.queue, &[info], fence) },
        "vkQueueSubmit",
    )?;
    Ok(before)
}
