//! Work on a compute queue without graphics (AMD's async compute queues; the test layer's
//! AMD shape presents one), beside a transfer-only queue: the transfer queue fills a
//! buffer, the compute queue runs a dispatch of 15 groups of 64 invocations (960) that
//! writes `data[i] = i * 3 + 7` into a buffer both families share. Only the compute
//! submission is logged: the transfer family has no timestamps, so its submission makes
//! no batch. With `GPU_TRACE_COUNTERS=pipeline` the compute family gets the compute
//! statistic only, and the transfer family none.

use ash::vk;

use super::{one_of, pool_of};
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, FillPipeline, Result};

/// The words the dispatch writes (15 groups of 64).
const WRITTEN: u32 = 960;
const WORDS: u32 = 4096;
const BASE: u32 = 7;

pub(super) fn compute_queue(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let missing = "the device has no compute family without graphics or no transfer-only \
                   family (run it on UTRACE_SHAPE=amd)";
    let ((compute_family, compute_queue), (transfer_family, transfer_queue)) =
        dev.compute.zip(dev.transfer).ok_or(missing)?;
    let d = &dev.device;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
    let data = Buffer::shared(dev, u64::from(WORDS) * 4, usage, &[compute_family])?;
    let scratch = Buffer::shared(dev, 4096, usage, &[transfer_family])?;
    let fill = FillPipeline::new(dev, &data)?;
    let pools = [
        pool_of(dev, compute_family)?,
        pool_of(dev, transfer_family)?,
    ];
    let fences = [dev.fence()?, dev.fence()?];
    // SAFETY: command buffers of live pools, recorded and submitted once; the host waits for
    // both fences before anything is destroyed.
    let result = unsafe {
        let (dispatch, transfer) = (one_of(dev, pools[0])?, one_of(dev, pools[1])?);
        dev.begin(transfer, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        d.cmd_fill_buffer(transfer, scratch.buffer, 0, 4096, 1);
        dev.end(transfer)?;
        dev.begin(dispatch, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        fill.record(dev, dispatch, BASE, WRITTEN);
        dev.end(dispatch)?;
        let (transfers, dispatches) = ([transfer], [dispatch]);
        let on = |cbs| vk::SubmitInfo::default().command_buffers(cbs);
        check(
            d.queue_submit(transfer_queue, &[on(&transfers)], fences[0]),
            "vkQueueSubmit",
        )?;
        let before = monotonic_ns();
        check(
            d.queue_submit(compute_queue, &[on(&dispatches)], fences[1]),
            "vkQueueSubmit",
        )?;
        check(
            d.wait_for_fences(&fences, true, u64::MAX),
            "vkWaitForFences",
        )?;
        let after = monotonic_ns();
        sub.note("compute-queue-dispatch", &[dispatch], before, after);
        let words = data.words();
        Ok((0..WRITTEN).all(|i| words[i as usize] == i * 3 + BASE))
    };
    // SAFETY: both submissions completed (their fences were waited for), or never ran.
    unsafe {
        d.device_wait_idle().ok();
        fences.iter().for_each(|&f| d.destroy_fence(f, None));
        pools.iter().for_each(|&p| d.destroy_command_pool(p, None));
    }
    fill.destroy(dev);
    data.destroy(dev);
    scratch.destroy(dev);
    result
}
