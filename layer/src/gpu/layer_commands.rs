//! The layer's own command buffers around a traced submission (see
//! [`super::queue_context`]): allocating a segment's pair, and recording into it the re-arm
//! before the segment and the copy after it (with the readback buffer they copy into).

use std::ffi::c_void;

use ash::vk;

use super::batch_resources::BatchResources;
use super::check;
use super::readback::Readback;
use super::segments::{Arming, CopyRange, QueryRange, Segment, SegmentCommands};
use crate::loader::dispatch::DeviceDispatch;

/// The loader's `vkSetDeviceLoaderData`: every dispatchable object the layer makes gets the
/// loader's dispatch pointer through it.
pub type SetLoaderData = ash_layer::PFN_vkSetDeviceLoaderData;

/// The layer's command buffers may run again as recorded (see `recorded_wraps`).
fn reusable() -> vk::CommandBufferBeginInfo<'static> {
    vk::CommandBufferBeginInfo::default()
}

pub(super) fn barrier(
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
    // SAFETY: as in `record_rearm`; the readback buffer is large enough for every slot.
    unsafe {
        check((fp.begin_command_buffer)(cb, &reusable()))?;
        copy_to_host(d, cb, copies, readback, 0);
        for r in resets_after {
            (fp.cmd_reset_query_pool)(cb, r.pool, 0, r.count);
        }
        check((fp.end_command_buffer)(cb))
    }
}

/// Records into `cb` (recording, outside any render pass) the copy of the queries `copies`
/// into `buffer` from `offset` (each at its slot), after the last copy into it and made
/// visible to the host: the layer's copy command buffer's, and the one a tracked
/// application command buffer ends with (into its run slot: see `run_slots`), which leaves
/// the queries as they are, so a wrapped submission of it still copies them itself.
pub(super) fn copy_to_host(
    d: &DeviceDispatch,
    cb: vk::CommandBuffer,
    copies: &[CopyRange],
    buffer: vk::Buffer,
    offset: u64,
) {
    let after_last_copy = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
    let to_host = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ);
    barrier(
        d,
        cb,
        vk::PipelineStageFlags::TRANSFER,
        Some(after_last_copy),
    );
    for c in copies {
        // SAFETY: `cb` is recording outside a render pass; `buffer` holds every slot from
        // `offset` on.
        unsafe {
            (d.fp_v1_0.cmd_copy_query_pool_results)(
                cb,
                c.pool,
                c.first,
                c.count,
                buffer,
                offset + u64::from(c.slot) * 8,
                u64::from(c.values.max(1)) * 8,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        };
    }
    barrier(d, cb, vk::PipelineStageFlags::HOST, Some(to_host));
}

/// The two command buffers (re-arm, copy) of one segment, from `pool`, each given the
/// loader's dispatch pointer.
pub(super) fn allocate_pair(
    d: &DeviceDispatch,
    set_loader_data: Option<SetLoaderData>,
    pool: vk::CommandPool,
) -> Result<SegmentCommands, vk::Result> {
    let fp = &d.fp_v1_0;
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(2);
    let mut cbs = [vk::CommandBuffer::null(); 2];
    // SAFETY: the pool belongs to this queue's family and is locked by the caller.
    check(unsafe { (fp.allocate_command_buffers)(d.handle, &info, cbs.as_mut_ptr()) })?;
    for cb in cbs {
        // A command buffer the layer makes is a dispatchable object the loader has not
        // seen: it must get the loader's dispatch pointer before any use.
        if let Some(set) = set_loader_data {
            // SAFETY: the loader's callback for a dispatchable object of this device.
            check(unsafe { set(d.handle, loader_object(cb)) })?;
        }
    }
    Ok(SegmentCommands {
        rearm: cbs[0],
        copy: cbs[1],
    })
}

/// Records `res`'s command buffers for `segments` (`total` timestamps), growing its readback
/// buffer when it is too small.
pub(super) fn record_resources(
    d: &DeviceDispatch,
    memory: &vk::PhysicalDeviceMemoryProperties,
    res: &mut BatchResources,
    segments: &[Segment<'_>],
    total: u32,
    arming: Arming,
) -> Result<(), vk::Result> {
    if res.readback.as_ref().is_none_or(|r| r.capacity < total) {
        if let Some(old) = res.readback.take() {
            old.destroy(d);
        }
        match Readback::create(d, memory, total.next_power_of_two().max(64)) {
            Ok(readback) => res.readback = Some(readback),
            Err(e) => {
                // Without a readback the batch cannot be timed, but the queries its
                // command buffers write must still be re-armed to stay valid: record
                // the re-arms, copies that copy nothing, and report the failure.
                for (segment, cbs) in segments.iter().zip(&res.segments) {
                    record_segment(d, cbs, segment, &[], vk::Buffer::null(), arming)?;
                }
                return Err(e);
            }
        }
    }
    let Some(readback) = res.readback.as_ref() else {
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    for (segment, cbs) in segments.iter().zip(&res.segments) {
        record_segment(d, cbs, segment, segment.copies, readback.buffer, arming)?;
    }
    Ok(())
}

/// A dispatchable handle as the pointer the loader's `vkSetDeviceLoaderData` takes.
pub(super) fn loader_object(cb: vk::CommandBuffer) -> *mut c_void {
    use ash::vk::Handle;
    cb.as_raw() as usize as *mut c_void
}
