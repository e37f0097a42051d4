//! `UTRACE_PERF_QUERY=1`: where the emulated performance queries get their values (see
//! `perf_pools`): a submission runs the queries its command buffers ended, and
//! `vkGetQueryPoolResults` reads them.

use ash::vk;
use ash::vk::Handle;

use crate::loader::next_device_fn;
use crate::perf_pools::{breach, chain, POOLS, RECORDINGS};

/// `count` elements at `ptr` (none when it is null, as an empty list may be).
///
/// # Safety
/// `ptr` is null or points at `count` elements.
unsafe fn slice<'a, T>(ptr: *const T, count: u32) -> &'a [T] {
    if ptr.is_null() || count == 0 {
        &[]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(ptr, count as usize) }
    }
}

/// The queries `cbs` ended get their values (the emulated GPU runs at submission). A query
/// still holding a run's values was not reset since: said as a breach.
fn submitted(cbs: impl Iterator<Item = vk::CommandBuffer>) {
    let recordings = RECORDINGS.lock();
    let mut pools = POOLS.lock();
    for cb in cbs {
        for &(pool, query, counted) in recordings.get(&cb.as_raw()).map_or(&[][..], |r| &r.ended) {
            if let Some(slot) = pools
                .get_mut(&pool)
                .and_then(|p| p.results.get_mut(query as usize))
            {
                if slot.is_some() {
                    breach(
                        "VUID-vkCmdBeginQuery-None-00807",
                        &format!("performance query {query} run again without a reset since its last run"),
                    );
                }
                *slot = Some(counted);
            }
        }
    }
}

pub(crate) unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: the caller's valid submissions and their command buffers.
    unsafe {
        let list = slice(submits, count);
        submitted(list.iter().flat_map(|s| {
            slice(s.p_command_buffers, s.command_buffer_count)
                .iter()
                .copied()
        }));
    }
    chain!(
        queue,
        c"vkQueueSubmit",
        vk::PFN_vkQueueSubmit,
        (queue, count, submits, fence),
        vk::Result::ERROR_DEVICE_LOST
    )
}

pub(crate) unsafe extern "system" fn queue_submit2(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: the caller's valid submissions and their command buffer infos.
    unsafe {
        let list = slice(submits, count);
        submitted(list.iter().flat_map(|s| {
            slice(s.p_command_buffer_infos, s.command_buffer_info_count)
                .iter()
                .map(|c| c.command_buffer)
        }));
    }
    chain!(
        queue,
        c"vkQueueSubmit2",
        vk::PFN_vkQueueSubmit2,
        (queue, count, submits, fence),
        vk::Result::ERROR_DEVICE_LOST
    )
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "system" fn get_query_pool_results(
    device: vk::Device,
    pool: vk::QueryPool,
    first: u32,
    count: u32,
    size: usize,
    data: *mut std::ffi::c_void,
    stride: u64,
    flags: vk::QueryResultFlags,
) -> vk::Result {
    let pools = POOLS.lock();
    let Some(p) = pools.get(&pool.as_raw()) else {
        drop(pools);
        return chain!(
            device,
            c"vkGetQueryPoolResults",
            vk::PFN_vkGetQueryPoolResults,
            (device, pool, first, count, size, data, stride, flags),
            vk::Result::ERROR_DEVICE_LOST
        );
    };
    if count == 0 || size == 0 {
        breach(
            "VUID-vkGetQueryPoolResults-dataSize-arraylength",
            "a performance query pool read of no queries",
        );
    }
    let mut result = vk::Result::SUCCESS;
    for i in 0..count {
        let Some(counted) = p.results.get((first + i) as usize).copied().flatten() else {
            result = vk::Result::NOT_READY;
            continue;
        };
        for (k, &c) in p.counters.iter().enumerate() {
            let at = i as usize * stride as usize + k * 8;
            if at + 8 <= size {
                // SAFETY: inside the caller's `size` bytes.
                unsafe {
                    data.cast::<u8>()
                        .add(at)
                        .cast::<u64>()
                        .write_unaligned(counted.value(c))
                };
            }
        }
    }
    result
}
