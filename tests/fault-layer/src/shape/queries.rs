//! The CPU side of the shape: timestamps read on the host become ticks
//! (`vkGetQueryPoolResults` of timestamp pools, `vkGetCalibratedTimestamps*`), and the
//! bookkeeping the GPU side needs (which pools hold timestamps; buffers that may receive a
//! copy of them can be bound as storage buffers).

use std::collections::HashSet;
use std::ffi::{c_void, CStr};
use std::sync::LazyLock;

use ash::vk;
use ash::vk::Handle;
use parking_lot::Mutex;

use super::family_indices::Shared;
use super::{log_pair, shape};
use crate::faults;
use crate::loader::next_device_fn;

/// Timestamp query pools, by handle.
static TIMESTAMP_POOLS: LazyLock<Mutex<HashSet<u64>>> = LazyLock::new(Default::default);

pub fn is_timestamp_pool(pool: vk::QueryPool) -> bool {
    TIMESTAMP_POOLS.lock().contains(&pool.as_raw())
}

/// The next layer's `name` of the device owning `handle`, as `F`.
///
/// # Safety
/// `handle` is a live dispatchable object of a device of this chain; `F` is the command's
/// function pointer type.
unsafe fn next<F: Copy, H: Handle>(handle: H, name: &CStr) -> Option<F> {
    // SAFETY: forwarded; a function pointer has the size of `PFN_vkVoidFunction`'s inner.
    unsafe {
        next_device_fn(handle, name)
            .map(|f| std::mem::transmute_copy::<unsafe extern "system" fn(), F>(&f))
    }
}

pub unsafe extern "system" fn create_query_pool(
    device: vk::Device,
    info: *const vk::QueryPoolCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::QueryPool,
) -> vk::Result {
    if let Some(result) = faults::check("vkCreateQueryPool") {
        return result;
    }
    // SAFETY: the caller's arguments, passed on; the pool is read only on success.
    unsafe {
        let Some(f) = next::<vk::PFN_vkCreateQueryPool, _>(device, c"vkCreateQueryPool") else {
            return vk::Result::ERROR_DEVICE_LOST;
        };
        let r = f(device, info, alloc, out);
        if r == vk::Result::SUCCESS && (*info).query_type == vk::QueryType::TIMESTAMP {
            TIMESTAMP_POOLS.lock().insert((*out).as_raw());
        }
        r
    }
}

pub unsafe extern "system" fn destroy_query_pool(
    device: vk::Device,
    pool: vk::QueryPool,
    alloc: *const vk::AllocationCallbacks<'_>,
) {
    TIMESTAMP_POOLS.lock().remove(&pool.as_raw());
    // SAFETY: the caller's arguments, passed on.
    unsafe {
        if let Some(f) = next::<vk::PFN_vkDestroyQueryPool, _>(device, c"vkDestroyQueryPool") {
            f(device, pool, alloc);
        }
    }
}

/// Buffers that may receive copied timestamps may also be bound as storage buffers, so that
/// the GPU side can shape them in place.
pub unsafe extern "system" fn create_buffer(
    device: vk::Device,
    info: *const vk::BufferCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Buffer,
) -> vk::Result {
    if let Some(result) = faults::check("vkCreateBuffer") {
        return result;
    }
    // SAFETY: the caller's valid create info, copied and passed on.
    unsafe {
        let Some(f) = next::<vk::PFN_vkCreateBuffer, _>(device, c"vkCreateBuffer") else {
            return vk::Result::ERROR_DEVICE_LOST;
        };
        let mut info = *info;
        if shape().is_some() && info.usage.contains(vk::BufferUsageFlags::TRANSFER_DST) {
            info.usage |= vk::BufferUsageFlags::STORAGE_BUFFER;
        }
        let mut keep = Vec::new();
        info.to_driver_families(&mut keep);
        f(device, &info, alloc, out)
    }
}

/// Timestamps read on the host: read down as 64-bit values with availability into a buffer
/// of the layer's, shaped, then laid out as the caller asked. A query the driver did not
/// write is left unwritten.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn get_query_pool_results(
    device: vk::Device,
    pool: vk::QueryPool,
    first: u32,
    count: u32,
    size: usize,
    data: *mut c_void,
    stride: u64,
    flags: vk::QueryResultFlags,
) -> vk::Result {
    if let Some(result) = faults::check("vkGetQueryPoolResults") {
        return result;
    }
    // SAFETY: the caller's arguments; the layer's own buffer holds two u64s a query.
    unsafe {
        let Some(f) = next::<vk::PFN_vkGetQueryPoolResults, _>(device, c"vkGetQueryPoolResults")
        else {
            return vk::Result::ERROR_DEVICE_LOST;
        };
        let Some(s) = shape().filter(|_| is_timestamp_pool(pool)) else {
            return f(device, pool, first, count, size, data, stride, flags);
        };
        const UNWRITTEN: u64 = u64::MAX;
        let mut own = vec![UNWRITTEN; count as usize * 2];
        let own_flags =
            flags | vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY;
        let r = f(
            device,
            pool,
            first,
            count,
            own.len() * 8,
            own.as_mut_ptr().cast(),
            16,
            own_flags,
        );
        if r != vk::Result::SUCCESS && r != vk::Result::NOT_READY {
            return r;
        }
        let wide = flags.contains(vk::QueryResultFlags::TYPE_64);
        let with_availability = flags.contains(vk::QueryResultFlags::WITH_AVAILABILITY);
        for i in 0..count as usize {
            let (ns, available) = (own[2 * i], own[2 * i + 1]);
            let at = data.cast::<u8>().add(i * stride as usize);
            if available != 0 && ns != UNWRITTEN {
                let ticks = s.ticks(ns);
                log_pair(ticks, ns);
                if wide {
                    at.cast::<u64>().write_unaligned(ticks);
                } else {
                    at.cast::<u32>().write_unaligned(ticks as u32);
                }
            }
            if with_availability {
                let available = u64::from(available != 0);
                if wide {
                    at.add(8).cast::<u64>().write_unaligned(available);
                } else {
                    at.add(4).cast::<u32>().write_unaligned(available as u32);
                }
            }
        }
        r
    }
}

/// The device's domain in ticks, like its queries.
pub unsafe extern "system" fn get_calibrated_timestamps(
    device: vk::Device,
    count: u32,
    infos: *const vk::CalibratedTimestampInfoKHR<'_>,
    timestamps: *mut u64,
    max_deviation: *mut u64,
) -> vk::Result {
    // SAFETY: the caller's arrays of `count` elements, read after the driver filled them.
    unsafe {
        let f = next::<vk::PFN_vkGetCalibratedTimestampsKHR, _>(
            device,
            c"vkGetCalibratedTimestampsKHR",
        )
        .or_else(|| next(device, c"vkGetCalibratedTimestampsEXT"));
        let Some(f) = f else {
            return vk::Result::ERROR_DEVICE_LOST;
        };
        let r = f(device, count, infos, timestamps, max_deviation);
        if let (vk::Result::SUCCESS, Some(s)) = (r, shape()) {
            for i in 0..count as usize {
                if (*infos.add(i)).time_domain == vk::TimeDomainKHR::DEVICE {
                    let ns = *timestamps.add(i);
                    let ticks = s.ticks(ns);
                    log_pair(ticks, ns);
                    *timestamps.add(i) = ticks;
                }
            }
        }
        r
    }
}
