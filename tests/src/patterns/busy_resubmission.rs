//! A reusable command buffer resubmitted as soon as its fence signals while long work
//! submitted after its last run is still on the GPU: the frame loop of an application with
//! work in flight. Were the layer to read the last run at the resubmission (the traceq
//! thread has not yet), a driver whose query read waits for the device to go idle
//! (Lavapipe's) would make that resubmission wait for the long work. Each submit call is
//! timed (`call_ns`). With `--pace-ms`, the application works that long on the CPU before
//! each resubmission: by then the traceq thread has woken and is reading the last run.

use ash::vk;

use super::{first_word, record_transfer, transfer_barrier};
use crate::submitter::{pace_ms, Submitter};
use crate::vk::{check, monotonic_ns, Buffer, Device, Result};

/// Bytes the long work fills, four times over: tens of milliseconds on Lavapipe.
const LONG_FILL: u64 = 64 << 20;

pub(super) fn resubmit_busy(dev: &Device, sub: &mut Submitter, frames: u32) -> Result<bool> {
    let d = &dev.device;
    let small = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let big = Buffer::new(dev, LONG_FILL, vk::BufferUsageFlags::TRANSFER_DST)?;
    let [cb, long]: [vk::CommandBuffer; 2] = dev
        .command_buffers(2)?
        .try_into()
        .map_err(|_| "two command buffers".to_string())?;
    dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
    record_transfer(dev, cb, &small, 0x77);
    dev.end(cb)?;
    dev.begin(long, vk::CommandBufferUsageFlags::empty())?;
    for value in 1..=4 {
        // SAFETY: `long` is recording; `big` has TRANSFER_DST and `LONG_FILL` bytes.
        unsafe { d.cmd_fill_buffer(long, big.buffer, 0, LONG_FILL, value) };
        transfer_barrier(dev, long);
    }
    dev.end(long)?;
    let (cb_fence, long_fence) = (dev.fence()?, dev.fence()?);
    let submit = |cb: vk::CommandBuffer, fence: vk::Fence| {
        let info = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cb));
        check(
            // SAFETY: recorded command buffers not pending (each run was waited for); an
            // unsignalled fence.
            unsafe { d.queue_submit(dev.queue, &[info], fence) },
            "vkQueueSubmit",
        )
    };
    // The long work of the frame before, left running: (its submit's start).
    let mut long_started: Option<u64> = None;
    for i in 0..frames {
        let before = monotonic_ns();
        submit(cb, cb_fence)?;
        let call_end = monotonic_ns();
        if let Some(started) = long_started.take() {
            dev.wait_and_reset(long_fence)?;
            sub.note(&format!("long-{}", i - 1), &[long], started, monotonic_ns());
        }
        dev.wait_and_reset(cb_fence)?;
        let times = [before, call_end, monotonic_ns()];
        sub.note_call(&format!("resubmit-busy-{i}"), &[cb], times);
        if i + 1 < frames {
            long_started = Some(monotonic_ns());
            submit(long, long_fence)?;
            std::thread::sleep(std::time::Duration::from_millis(pace_ms()));
        }
    }
    let ok = first_word(&small) == 0x77 && big.words()[0] == 4;
    // SAFETY: every submission completed.
    unsafe {
        d.destroy_fence(cb_fence, None);
        d.destroy_fence(long_fence, None);
        d.free_command_buffers(dev.pool, &[cb, long]);
    }
    small.destroy(dev);
    big.destroy(dev);
    Ok(ok)
}
