//! The GPU side of the shape: timestamps copied by `vkCmdCopyQueryPoolResults` become
//! ticks on the GPU, where the copy lands, by a compute pass over the copied range
//! (`shaders/shape_ticks.comp`).
//!
//! The pass is recorded at `vkEndCommandBuffer`, after everything the command buffer
//! records: no command of the application's follows it, so the compute state it binds
//! disturbs nothing (a command buffer's state does not outlive it, and after
//! `vkCmdExecuteCommands` a primary's state is undefined anyway). So what the host reads
//! after the batch completed is ticks; a command of the same command buffer that read the
//! copy on the GPU would still see nanoseconds (neither utrace nor the tests do that).
//! Only 64-bit copies are shaped (what utrace records); a 32-bit copy is said once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::LazyLock;

use ash::vk;
use ash::vk::Handle;
use parking_lot::Mutex;

use super::queries::is_timestamp_pool;
use super::shape;
use crate::loader::shape_device;

mod resources;
pub use resources::DeviceShape;

/// A copy of timestamps recorded in a command buffer, to shape at its end.
#[derive(Clone, Copy)]
struct Copy {
    buffer: vk::Buffer,
    offset: u64,
    stride: u64,
    count: u32,
    availability: bool,
}

/// The copies recorded in each command buffer since it began.
static PENDING: LazyLock<Mutex<HashMap<u64, Vec<Copy>>>> = LazyLock::new(Default::default);

#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn cmd_copy_query_pool_results(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    first: u32,
    count: u32,
    buffer: vk::Buffer,
    offset: u64,
    stride: u64,
    flags: vk::QueryResultFlags,
) {
    device_down!(
        cb,
        c"vkCmdCopyQueryPoolResults",
        vk::PFN_vkCmdCopyQueryPoolResults,
        (cb, pool, first, count, buffer, offset, stride, flags)
    );
    if shape().is_none() || !is_timestamp_pool(pool) || count == 0 {
        return;
    }
    if !flags.contains(vk::QueryResultFlags::TYPE_64) {
        static SAID: AtomicBool = AtomicBool::new(false);
        if !SAID.swap(true, Ordering::Relaxed) {
            eprintln!("utrace-shape: 32-bit copies of timestamps are not shaped");
        }
        return;
    }
    let copy = Copy {
        buffer,
        offset,
        stride,
        count,
        availability: flags.contains(vk::QueryResultFlags::WITH_AVAILABILITY),
    };
    PENDING.lock().entry(cb.as_raw()).or_default().push(copy);
}

/// A recording begins: copies of an earlier recording are forgotten.
pub fn forget(cb: vk::CommandBuffer) {
    PENDING.lock().remove(&cb.as_raw());
}

pub unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    let copies = PENDING.lock().remove(&cb.as_raw()).unwrap_or_default();
    if !copies.is_empty() {
        // SAFETY: a command buffer of this chain's device.
        if let Some(device) = unsafe { shape_device(cb) } {
            // SAFETY: `cb` is recording, outside any render pass (a copy was just allowed).
            unsafe { record(&device, cb, &copies) };
        }
    }
    device_down!(cb, c"vkEndCommandBuffer", vk::PFN_vkEndCommandBuffer, (cb))
        .unwrap_or(vk::Result::ERROR_DEVICE_LOST)
}

/// # Safety
/// `cb` is recording, outside a render pass, on `device`.
unsafe fn record(device: &DeviceShape, cb: vk::CommandBuffer, copies: &[Copy]) {
    let Some(s) = shape() else { return };
    let d = &device.fns;
    let to_compute = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE);
    let after = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
        .dst_access_mask(
            vk::AccessFlags::MEMORY_READ
                | vk::AccessFlags::MEMORY_WRITE
                | vk::AccessFlags::HOST_READ,
        );
    // SAFETY: as the caller promises; every object is the device's and alive.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::DependencyFlags::empty(),
            &[to_compute],
            &[],
            &[],
        );
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, device.pipeline);
        for c in copies {
            let infos = [
                [vk::DescriptorBufferInfo::default()
                    .buffer(c.buffer)
                    .range(vk::WHOLE_SIZE)],
                [vk::DescriptorBufferInfo::default()
                    .buffer(device.log.buffer)
                    .range(vk::WHOLE_SIZE)],
            ];
            let writes = [0, 1].map(|binding: u32| {
                vk::WriteDescriptorSet::default()
                    .dst_binding(binding)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&infos[binding as usize])
            });
            (device.push.cmd_push_descriptor_set_khr)(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                device.layout,
                0,
                writes.len() as u32,
                writes.as_ptr(),
            );
            let words: [u32; 11] = [
                (c.offset / 4) as u32,
                c.count,
                (c.stride / 4) as u32,
                u32::from(c.availability),
                s.base as u32,
                (s.base >> 32) as u32,
                s.offset() as u32,
                (s.offset() >> 32) as u32,
                s.mask as u32,
                (s.mask >> 32) as u32,
                s.multiplier,
            ];
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
            d.cmd_push_constants(cb, device.layout, vk::ShaderStageFlags::COMPUTE, 0, &bytes);
            d.cmd_dispatch(cb, c.count.div_ceil(64), 1, 1);
        }
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::PipelineStageFlags::ALL_COMMANDS | vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[after],
            &[],
            &[],
        );
    }
}
