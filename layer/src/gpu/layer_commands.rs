//! What the layer records into its own command buffers around a traced submission (see
//! [`super::queue_context`]): the re-arm before a segment, the copy after it.

use ash::vk;

use super::check;
use super::segments::{Arming, CopyRange, QueryRange, Segment, SegmentCommands};
use crate::loader::dispatch::DeviceDispatch;

/// The layer's command buffers may run again as recorded (see `recorded_wraps`).
fn reusable() -> vk::CommandBufferBeginInfo<'static> {
    vk::CommandBufferBeginInfo::default()
}

fn barrier(
    d: &DeviceDispatch,
    cb: vk::CommandBuffer,
    dst: vk::PipelineStageFlags,
    memory: Option<vk::MemoryBarrier<'_>>,
) {
    let (count, ptr) = match memory.as_ref() {
        Some(m) => (1, m as *const vk::MemoryBarrier<'_>),
        None => (0, std::ptr::null()),
    };
    // SAFETY: `cb` is recording; the barrier (if any) lives across the call.
    unsafe {
        (d.fp_v1_0.cmd_pipeline_barrier)(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            dst,
            vk::DependencyFlags::empty(),
            count,
            ptr,
            0,
            std::ptr::null(),
            0,
            std::ptr::null(),
        )
    };
}

/// The layer's command buffers of one segment: the re-arm if the arming has one, and the
/// copy of `copies` (none when the batch is untimed).
pub(super) fn record_segment(
    d: &DeviceDispatch,
    cbs: &SegmentCommands,
    segment: &Segment<'_>,
    copies: &[CopyRange],
    readback: vk::Buffer,
    arming: Arming,
) -> Result<(), vk::Result> {
    if arming.rearm {
        record_rearm(d, cbs.rearm, segment.resets)?;
    }
    let after: &[QueryRange] = if arming.reset_after_copy {
        segment.resets
    } else {
        &[]
    };
    record_copy(d, cbs.copy, copies, readback, after)
}

/// Re-arm: an execution barrier after earlier copies of the same queries on this queue,
/// then a reset of every query the segment writes.
fn record_rearm(
    d: &DeviceDispatch,
    cb: vk::CommandBuffer,
    resets: &[QueryRange],
) -> Result<(), vk::Result> {
    let fp = &d.fp_v1_0;
    // SAFETY: `cb` is idle (fresh, or its batch completed) and its pool is locked by the
    // caller; the query pools are live.
    unsafe {
        check((fp.begin_command_buffer)(cb, &reusable()))?;
        barrier(d, cb, vk::PipelineStageFlags::TRANSFER, None);
        for r in resets {
            (fp.cmd_reset_query_pool)(cb, r.pool, 0, r.count);
        }
        check((fp.end_command_buffer)(cb))
    }
}

/// Copy: after earlier copies into the readback (write after write), the segment's
/// timestamps into their slots (waiting for availability), then made visible to the host;
/// then `resets_after` reset, ready for the next run (the reset follows the copy: it
/// depends on every earlier command that uses its queries).
fn record_copy(
    d: &DeviceDispatch,
    cb: vk::CommandBuffer,
    copies: &[CopyRange],
    readback: vk::Buffer,
    resets_after: &[QueryRange],
) -> Result<(), vk::Result> {
    let fp = &d.fp_v1_0;
    let after_last_copy = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
    let to_host = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ);
    // SAFETY: as in `record_rearm`; the readback buffer is large enough for every slot.
    unsafe {
        check((fp.begin_command_buffer)(cb, &reusable()))?;
        barrier(
            d,
            cb,
            vk::PipelineStageFlags::TRANSFER,
            Some(after_last_copy),
        );
        for c in copies {
            (fp.cmd_copy_query_pool_results)(
                cb,
                c.pool,
                c.first,
                c.count,
                readback,
                u64::from(c.slot) * 8,
                8,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            );
        }
        barrier(d, cb, vk::PipelineStageFlags::HOST, Some(to_host));
        for r in resets_after {
            (fp.cmd_reset_query_pool)(cb, r.pool, 0, r.count);
        }
        check((fp.end_command_buffer)(cb))
    }
}
