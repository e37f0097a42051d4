//! Work on a transfer-only queue beside the traced queue (AMD's DMA queues; the test
//! layer's AMD shape presents one): the transfer queue fills a buffer both families share
//! and signals a semaphore; the graphics queue waits for it and copies the buffer to one the
//! host reads. Only the graphics submission is logged: a family without timestamps is not
//! traced, so its submission makes no batch.

use ash::vk;

use super::{one_of, pool, pool_of};
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, Result};

const SIZE: u64 = 4096;
const VALUE: u32 = 0x5eed_0d3a;

pub(super) fn transfer_queue(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let (transfer_family, transfer_queue) = dev
        .transfer
        .ok_or("the device has no transfer-only queue family (run it on UTRACE_SHAPE=amd)")?;
    let d = &dev.device;
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let shared = Buffer::shared(dev, SIZE, usage, &[dev.family, transfer_family])?;
    let readback = Buffer::new(dev, SIZE, vk::BufferUsageFlags::TRANSFER_DST)?;
    let transfer_pool = pool_of(dev, transfer_family)?;
    let graphics_pool = pool(dev)?;
    let semaphore = dev.semaphore()?;
    let fences = [dev.fence()?, dev.fence()?];
    // SAFETY: command buffers of live pools, recorded and submitted once; the host waits for
    // both fences before anything is destroyed.
    let result = unsafe {
        let (fill, copy) = (one_of(dev, transfer_pool)?, one_of(dev, graphics_pool)?);
        dev.begin(fill, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        d.cmd_fill_buffer(fill, shared.buffer, 0, SIZE, VALUE);
        dev.end(fill)?;
        dev.begin(copy, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        let region = vk::BufferCopy::default().size(SIZE);
        d.cmd_copy_buffer(copy, shared.buffer, readback.buffer, &[region]);
        dev.end(copy)?;
        let signals = [semaphore];
        let fill_info = vk::SubmitInfo::default()
            .command_buffers(std::slice::from_ref(&fill))
            .signal_semaphores(&signals);
        check(
            d.queue_submit(transfer_queue, &[fill_info], fences[0]),
            "vkQueueSubmit",
        )?;
        let stages = [vk::PipelineStageFlags::TRANSFER];
        let copy_info = vk::SubmitInfo::default()
            .command_buffers(std::slice::from_ref(&copy))
            .wait_semaphores(&signals)
            .wait_dst_stage_mask(&stages);
        let before = monotonic_ns();
        check(
            d.queue_submit(dev.queue, &[copy_info], fences[1]),
            "vkQueueSubmit",
        )?;
        check(
            d.wait_for_fences(&fences, true, u64::MAX),
            "vkWaitForFences",
        )?;
        let after = monotonic_ns();
        sub.note("copy-after-transfer", &[copy], before, after);
        Ok(readback.words().iter().all(|&w| w == VALUE))
    };
    // SAFETY: both submissions completed (their fences were waited for), or never ran.
    unsafe {
        d.device_wait_idle().ok();
        fences.iter().for_each(|&f| d.destroy_fence(f, None));
        d.destroy_semaphore(semaphore, None);
        d.destroy_command_pool(transfer_pool, None);
        d.destroy_command_pool(graphics_pool, None);
    }
    shared.destroy(dev);
    readback.destroy(dev);
    result
}
