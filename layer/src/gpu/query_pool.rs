//! Timestamp query pools: the storage of trace chunks.

use ash::vk;

use super::check;
use crate::loader::dispatch::DeviceDispatch;

/// Queries per chunk, by size class. A recording takes small chunks first, so that a typical
/// command buffer needs one or two and its submissions reset and copy little unused space;
/// one that has used as many queries as a larger chunk holds takes larger ones from then on,
/// so that a million draws are read, reset and copied in a few hundred calls rather than
/// tens of thousands (Lavapipe's `vkGetQueryPoolResults` waits for the device to go idle
/// at every call: 110 us a call, 7 s for a million draws in 64-query chunks).
pub const CHUNK_SIZES: [u32; 3] = [64, 512, 4096];

/// The smallest chunk: the most queries one timestamp may take (one per view).
pub const CHUNK_QUERIES: u32 = CHUNK_SIZES[0];

/// The size class of a recording's next chunk once it has used `used` queries: the
/// largest size it has already filled (so at most half of its queries lie unused).
#[inline]
pub fn next_chunk_class(used: u32) -> usize {
    CHUNK_SIZES.iter().rposition(|&s| s <= used).unwrap_or(0)
}

pub fn create(d: &DeviceDispatch, size: u32) -> Result<vk::QueryPool, vk::Result> {
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(size);
    let mut pool = vk::QueryPool::null();
    // SAFETY: valid create info on a live device; the pool is destroyed by `destroy`.
    check(unsafe { (d.fp_v1_0.create_query_pool)(d.handle, &info, std::ptr::null(), &mut pool) })?;
    Ok(pool)
}

pub fn destroy(d: &DeviceDispatch, pool: vk::QueryPool) {
    // SAFETY: called once per pool, when no pending work uses it (device teardown).
    unsafe { (d.fp_v1_0.destroy_query_pool)(d.handle, pool, std::ptr::null()) };
}

/// Resets the first `count` queries of `pool` from the host (`vkResetQueryPool`), when the
/// device has it.
///
/// # Safety
/// `hostQueryReset` is enabled, no pending work uses the pool, and it holds `count` queries
/// at least.
pub unsafe fn reset_range_on_host(d: &DeviceDispatch, pool: vk::QueryPool, count: u32) {
    if let Some(reset) = d.reset_query_pool {
        // SAFETY: the caller's promise.
        unsafe { reset(d.handle, pool, 0, count) };
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

/// Begins query `query` of `pool` (pipeline statistics, or hardware counters) in `cmd`.
///
/// # Safety
/// `cmd` is recording, of a family `pool`'s queries suit, with no query of the pool's type
/// active; the query was reset and is not used again before it is reset; any rule of the
/// type's own holds (see the callers).
pub unsafe fn begin(d: &DeviceDispatch, cmd: vk::CommandBuffer, pool: vk::QueryPool, query: u32) {
    // SAFETY: the caller's promise.
    unsafe { (d.fp_v1_0.cmd_begin_query)(cmd, pool, query, vk::QueryControlFlags::empty()) };
}

/// Ends query `query` of `pool` in `cmd`.
///
/// # Safety
/// The query is the one active in `cmd`, begun in the same subpass (or outside any render
/// pass, if it was begun outside); any rule of the type's own holds.
pub unsafe fn end(d: &DeviceDispatch, cmd: vk::CommandBuffer, pool: vk::QueryPool, query: u32) {
    // SAFETY: the caller's promise.
    unsafe { (d.fp_v1_0.cmd_end_query)(cmd, pool, query) };
}

/// Reads queries `0..count` of `pool`, `per_query` 64-bit values each, into `out` (which
/// holds `count * per_query`), of queries whose work has completed, with `flags` (`TYPE_64`
/// for statistics; none for performance queries, whose results are 8 bytes each anyway).
/// `NOT_READY` when one was never ended (its values are then not used).
pub fn read_results(
    d: &DeviceDispatch,
    (pool, count, per_query): (vk::QueryPool, u32, u32),
    flags: vk::QueryResultFlags,
    out: &mut [u64],
) -> Result<(), vk::Result> {
    let stride = u64::from(per_query) * 8;
    // SAFETY: `out` holds `count * per_query` 64-bit values, written `stride` apart.
    let r = unsafe {
        (d.fp_v1_0.get_query_pool_results)(
            d.handle,
            pool,
            0,
            count,
            std::mem::size_of_val(out),
            out.as_mut_ptr().cast(),
            stride,
            flags,
        )
    };
    check(r)
}
