//! Timestamp query pools: the storage of trace chunks.

use ash::vk;

use super::check;
use crate::loader::dispatch::DeviceDispatch;

/// Queries per chunk. Large enough that a typical command buffer needs one or two chunks,
/// small enough that the per-submission reset and copy touch little unused space.
pub const CHUNK_QUERIES: u32 = 64;

pub fn create(d: &DeviceDispatch) -> Result<vk::QueryPool, vk::Result> {
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(CHUNK_QUERIES);
    let mut pool = vk::QueryPool::null();
    // SAFETY: valid create info on a live device; the pool is destroyed by `destroy`.
    check(unsafe { (d.fp_v1_0.create_query_pool)(d.handle, &info, std::ptr::null(), &mut pool) })?;
    Ok(pool)
}

pub fn destroy(d: &DeviceDispatch, pool: vk::QueryPool) {
    // SAFETY: called once per pool, when no pending work uses it (device teardown).
    unsafe { (d.fp_v1_0.destroy_query_pool)(d.handle, pool, std::ptr::null()) };
}

/// Resets every query of `pool` from the host (`vkResetQueryPool`), when the device has it.
///
/// # Safety
/// `hostQueryReset` is enabled, and no pending work uses the pool.
pub unsafe fn reset_on_host(d: &DeviceDispatch, pool: vk::QueryPool) {
    // SAFETY: the caller's promise.
    unsafe { reset_range_on_host(d, pool, CHUNK_QUERIES) };
}

/// Resets the first `count` queries of `pool` from the host, as [`reset_on_host`].
///
/// # Safety
/// As [`reset_on_host`].
pub unsafe fn reset_range_on_host(d: &DeviceDispatch, pool: vk::QueryPool, count: u32) {
    if let Some(reset) = d.reset_query_pool {
        // SAFETY: the caller's promise; `count` is at most the pool's size.
        unsafe { reset(d.handle, pool, 0, count.min(CHUNK_QUERIES)) };
    }
}

/// Reads `out.len()` timestamps from `first` on, of queries whose writes have completed
/// (their batch's completion was waited for).
pub fn read(
    d: &DeviceDispatch,
    pool: vk::QueryPool,
    first: u32,
    out: &mut [u64],
) -> Result<(), vk::Result> {
    // SAFETY: `out` holds `out.len()` 64-bit values, written with a stride of 8; the queries
    // were written by completed work (no wait is asked for).
    let r = unsafe {
        (d.fp_v1_0.get_query_pool_results)(
            d.handle,
            pool,
            first,
            out.len() as u32,
            std::mem::size_of_val(out),
            out.as_mut_ptr().cast(),
            8,
            vk::QueryResultFlags::TYPE_64,
        )
    };
    check(r)
}
