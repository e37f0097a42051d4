//! A reusable command buffer resubmitted as soon as its fence signals while long work
//! submitted after its last run is still on the GPU: the frame loop of an application with
//! work in flight. Were the layer to read the last run at the resubmission (the traceq
//! thread has not yet), a driver whose query read waits for the device to go idle
//! (Lavapipe's) would make that resubmission wait for the long work. Each submit call is
//! timed (`call_ns`). `resubmit-busy-many` resubmits six such command buffers in one
//! batch (more than the layer saves in one submission). With `--pace-ms`, the application works that long on the CPU before
//! each resubmission: by then the traceq thread has woken and is reading the last run.

use ash::vk;

use super::{first_word, record_transfer, transfer_barrier};
use crate::submitter::{pace_ms, Submitter};
use crate::vk::{check, monotonic_ns, Buffer, Device, Result};

/// Bytes the long work fills, four times over: tens of milliseconds on Lavapipe.
const LONG_FILL: u64 = 64 << 20;

/// `count` small reusable command buffers (each writing a buffer of its own), resubmitted
/// together in one batch as soon as its fence signals, with the long work in flight.
pub(super) fn resubmit_busy(
    dev: &Device,
    sub: &mut Submitter,
    frames: u32,
    count: usize,
) -> Result<bool> {
    let d = &dev.device;
    let smalls = (0..count)
        .map(|_| Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST))
        .collect::<Result<Vec<_>>>()?;
    let big = Buffer::new(dev, LONG_FILL, vk::BufferUsageFlags::TRANSFER_DST)?;
    let mut cbs = dev.command_buffers(count as u32 + 1)?;
    let long = cbs.pop().ok_or("a command buffer for the long work")?;
    for (&cb, small) in cbs.iter().zip(&smalls) {
        dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
        record_transfer(dev, cb, small, 0x77);
        dev.end(cb)?;
    }
    dev.begin(long, vk::CommandBufferUsageFlags::empty())?;
    for value in 1..=4 {
        // SAFETY: `long` is recording; `big` has TRANSFER_DST and `LONG_FILL` bytes.
        unsafe { d.cmd_fill_buffer(long, big.buffer, 0, LONG_FILL, value) };
        transfer_barrier(dev, long);
    }
    dev.end(long)?;
    let (cb_fence, long_fence) = (dev.fence()?, dev.fence()?);
    let submit = |cbs: &[vk::CommandBuffer], fence: vk::Fence| {
        let info = vk::SubmitInfo::default().command_buffers(cbs);
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
        submit(&cbs, cb_fence)?;
        let call_end = monotonic_ns();
        if let Some(started) = long_started.take() {
            dev.wait_and_reset(long_fence)?;
            sub.note(&format!("long-{}", i - 1), &[long], started, monotonic_ns());
        }
        dev.wait_and_reset(cb_fence)?;
        let times = [before, call_end, monotonic_ns()];
        sub.note_call(&format!("resubmit-busy-{i}"), &cbs, times);
        if i + 1 < frames {
            long_started = Some(monotonic_ns());
            submit(std::slice::from_ref(&long), long_fence)?;
            std::thread::sleep(std::time::Duration::from_millis(pace_ms()));
        }
    }
    let ok = smalls.iter().all(|small| first_word(small) == 0x77) && big.words()[0] == 4;
    // SAFETY: every submission completed.
    unsafe {
        d.destroy_fence(cb_fence, None);
        d.destroy_fence(long_fence, None);
        d.free_command_buffers(dev.pool, &cbs);
        d.free_command_buffers(dev.pool, &[long]);
    }
    for small in smalls {
        small.destroy(dev);
    }
    big.destroy(dev);
    Ok(ok)
}
