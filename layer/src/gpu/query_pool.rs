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
