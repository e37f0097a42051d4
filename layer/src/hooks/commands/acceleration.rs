//! Acceleration-structure work (VK_KHR_acceleration_structure): builds, copies (clones,
//! compactions, serialization) and property writes, each bracketed by its range. A build
//! reports the first info's type and mode, and the totals over every info (a BVH rebuild
//! of a scene is one call of many infos).

use ash::vk;

use super::bracketed;
use crate::hooks::slice;
use crate::trace::args::INDIRECT;
use crate::trace::tracepoints::*;

/// Type and mode of the first info, the geometries of all, and the union of their flags.
fn summary(
    infos: &[vk::AccelerationStructureBuildGeometryInfoKHR<'_>],
) -> (
    vk::AccelerationStructureTypeKHR,
    vk::BuildAccelerationStructureModeKHR,
    u32,
    vk::BuildAccelerationStructureFlagsKHR,
) {
    let first = infos.first();
    (
        first.map_or(vk::AccelerationStructureTypeKHR::GENERIC, |i| i.ty),
        first.map_or(vk::BuildAccelerationStructureModeKHR::BUILD, |i| i.mode),
        infos.iter().map(|i| i.geometry_count).sum(),
        infos
            .iter()
            .fold(vk::BuildAccelerationStructureFlagsKHR::empty(), |f, i| {
                f | i.flags
            }),
    )
}

/// The primitives of every geometry of every info, from their build ranges.
///
/// # Safety
/// `ranges` holds one pointer per info, each to `geometry_count` ranges (Vulkan's rule for
/// `ppBuildRangeInfos`).
unsafe fn primitives(
    infos: &[vk::AccelerationStructureBuildGeometryInfoKHR<'_>],
    ranges: *const *const vk::AccelerationStructureBuildRangeInfoKHR,
) -> u64 {
    // SAFETY: one pointer per info (the caller's guarantee).
    let per_info = unsafe { slice(ranges, infos.len() as u32) };
    infos
        .iter()
        .zip(per_info)
        .map(|(info, &r)| {
            // SAFETY: `geometry_count` ranges for this info (the caller's guarantee).
            let ranges = unsafe { slice(r, info.geometry_count) };
            ranges
                .iter()
                .map(|r| u64::from(r.primitive_count))
                .sum::<u64>()
        })
        .sum()
}

bracketed! {
    /// `vkCmdBuildAccelerationStructuresKHR`.
    cmd_build_acceleration_structures(cb, count: u32, p_infos: *const vk::AccelerationStructureBuildGeometryInfoKHR<'_>, pp_ranges: *const *const vk::AccelerationStructureBuildRangeInfoKHR) = ext cmd_build_acceleration_structures;
    switch toggle::BUILD_ACCELERATION_STRUCTURES;
    before |r, t| {
        // SAFETY: the application passes `count` infos.
        let infos = unsafe { slice(p_infos, count) };
        let (ty, mode, geometries, flags) = summary(infos);
        // SAFETY: Vulkan's rule for `ppBuildRangeInfos`: one array of ranges per info.
        let prims = unsafe { primitives(infos, pp_ranges) };
        trace_start_build_acceleration_structures(r, t, ty, mode, count, geometries, prims, flags)
    };
    after |r, t| trace_end_build_acceleration_structures(r, t);
}

bracketed! {
    /// `vkCmdBuildAccelerationStructuresIndirectKHR`: the primitive counts are read by the
    /// device, so they show as `indirect`.
    cmd_build_acceleration_structures_indirect(cb, count: u32, p_infos: *const vk::AccelerationStructureBuildGeometryInfoKHR<'_>, p_addresses: *const vk::DeviceAddress, p_strides: *const u32, pp_max_primitive_counts: *const *const u32) = ext cmd_build_acceleration_structures_indirect;
    switch toggle::BUILD_ACCELERATION_STRUCTURES;
    before |r, t| {
        // SAFETY: the application passes `count` infos.
        let infos = unsafe { slice(p_infos, count) };
        let (ty, mode, geometries, flags) = summary(infos);
        trace_start_build_acceleration_structures(r, t, ty, mode, count, geometries, INDIRECT, flags)
    };
    after |r, t| trace_end_build_acceleration_structures(r, t);
}

bracketed! {
    /// `vkCmdCopyAccelerationStructureKHR` (a clone or a compaction).
    cmd_copy_acceleration_structure(cb, p_info: *const vk::CopyAccelerationStructureInfoKHR<'_>) = ext cmd_copy_acceleration_structure;
    switch toggle::COPY_ACCELERATION_STRUCTURE;
    // SAFETY: a valid info.
    before |r, t| trace_start_copy_acceleration_structure(r, t, unsafe { (*p_info).mode });
    after |r, t| trace_end_copy_acceleration_structure(r, t);
}

bracketed! {
    /// `vkCmdCopyAccelerationStructureToMemoryKHR` (serialization).
    cmd_copy_acceleration_structure_to_memory(cb, p_info: *const vk::CopyAccelerationStructureToMemoryInfoKHR<'_>) = ext cmd_copy_acceleration_structure_to_memory;
    switch toggle::COPY_ACCELERATION_STRUCTURE;
    // SAFETY: a valid info.
    before |r, t| trace_start_copy_acceleration_structure(r, t, unsafe { (*p_info).mode });
    after |r, t| trace_end_copy_acceleration_structure(r, t);
}

bracketed! {
    /// `vkCmdCopyMemoryToAccelerationStructureKHR` (deserialization).
    cmd_copy_memory_to_acceleration_structure(cb, p_info: *const vk::CopyMemoryToAccelerationStructureInfoKHR<'_>) = ext cmd_copy_memory_to_acceleration_structure;
    switch toggle::COPY_ACCELERATION_STRUCTURE;
    // SAFETY: a valid info.
    before |r, t| trace_start_copy_acceleration_structure(r, t, unsafe { (*p_info).mode });
    after |r, t| trace_end_copy_acceleration_structure(r, t);
}

bracketed! {
    /// `vkCmdWriteAccelerationStructuresPropertiesKHR` (compacted or serialization sizes).
    cmd_write_acceleration_structures_properties(cb, count: u32, p_structures: *const vk::AccelerationStructureKHR, query_type: vk::QueryType, pool: vk::QueryPool, first_query: u32) = ext cmd_write_acceleration_structures_properties;
    switch toggle::WRITE_ACCELERATION_STRUCTURES_PROPERTIES;
    before |r, t| trace_start_write_acceleration_structures_properties(r, t, count, query_type);
    after |r, t| trace_end_write_acceleration_structures_properties(r, t);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_sum_geometries_and_primitives_over_infos() {
        type F = vk::BuildAccelerationStructureFlagsKHR;
        let infos = [
            vk::AccelerationStructureBuildGeometryInfoKHR::default()
                .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL)
                .mode(vk::BuildAccelerationStructureModeKHR::UPDATE)
                .flags(F::PREFER_FAST_TRACE),
            vk::AccelerationStructureBuildGeometryInfoKHR::default()
                .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL)
                .flags(F::ALLOW_COMPACTION),
        ];
        let mut infos = infos;
        infos[0].geometry_count = 2;
        infos[1].geometry_count = 1;
        let range = |n| vk::AccelerationStructureBuildRangeInfoKHR {
            primitive_count: n,
            ..Default::default()
        };
        let first = [range(2), range(1)];
        let second = [range(10)];
        let ranges = [first.as_ptr(), second.as_ptr()];
        let (ty, mode, geometries, flags) = summary(&infos);
        assert_eq!(ty, vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL);
        assert_eq!(mode, vk::BuildAccelerationStructureModeKHR::UPDATE);
        assert_eq!(geometries, 3);
        assert_eq!(flags, F::PREFER_FAST_TRACE | F::ALLOW_COMPACTION);
        // SAFETY: one array of `geometry_count` ranges per info.
        assert_eq!(unsafe { primitives(&infos, ranges.as_ptr()) }, 13);
    }
}
