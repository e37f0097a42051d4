//! Ray tracing dispatches (VK_KHR_ray_tracing_pipeline and its maintenance1), each bracketed
//! by `trace_rays` and naming the ray tracing pipeline bound, as draws name theirs. With
//! GPU counters each gets a statistics query, as a dispatch does: Vulkan has no ray
//! tracing statistic, but drivers that run ray tracing shaders as compute count them among
//! the compute shader invocations, which the range shows.

use ash::vk;

use super::bracketed;
use crate::trace::record::statistics::Shown;
use crate::trace::tracepoints::*;

bracketed! {
    /// `vkCmdTraceRaysKHR`.
    cmd_trace_rays(cb, raygen: *const vk::StridedDeviceAddressRegionKHR, miss: *const vk::StridedDeviceAddressRegionKHR, hit: *const vk::StridedDeviceAddressRegionKHR, callable: *const vk::StridedDeviceAddressRegionKHR, width: u32, height: u32, depth: u32) = ext cmd_trace_rays;
    switch toggle::TRACE_RAYS;
    before |r, t| {
        let p = t.pipelines.ray_tracing;
        trace_start_trace_rays(r, t, width, height, depth, false, p);
        t.begin_range_statistics(r, Shown::Compute);
    };
    after |r, t| counted_end(r, t);
}

bracketed! {
    /// `vkCmdTraceRaysIndirectKHR`: the dimensions are read by the device.
    cmd_trace_rays_indirect(cb, raygen: *const vk::StridedDeviceAddressRegionKHR, miss: *const vk::StridedDeviceAddressRegionKHR, hit: *const vk::StridedDeviceAddressRegionKHR, callable: *const vk::StridedDeviceAddressRegionKHR, address: vk::DeviceAddress) = ext cmd_trace_rays_indirect;
    switch toggle::TRACE_RAYS;
    before |r, t| {
        let p = t.pipelines.ray_tracing;
        trace_start_trace_rays(r, t, 0, 0, 0, true, p);
        t.begin_range_statistics(r, Shown::Compute);
    };
    after |r, t| counted_end(r, t);
}

bracketed! {
    /// `vkCmdTraceRaysIndirect2KHR`: the shader binding table and dimensions are read by the
    /// device.
    cmd_trace_rays_indirect2(cb, address: vk::DeviceAddress) = ext cmd_trace_rays_indirect2;
    switch toggle::TRACE_RAYS;
    before |r, t| {
        let p = t.pipelines.ray_tracing;
        trace_start_trace_rays(r, t, 0, 0, 0, true, p);
        t.begin_range_statistics(r, Shown::Compute);
    };
    after |r, t| counted_end(r, t);
}

/// A trace-rays range's end: its statistics query ended before its end timestamp, and the
/// range closed at its end event (see `bracketed!`'s `counted` hooks).
fn counted_end(r: &crate::trace::record::recorder::Recorder<'_>, t: &mut CommandTrace) {
    t.end_range_statistics(r, Shown::Compute);
    let before = t.events_len();
    trace_end_trace_rays(r, t);
    t.close_range_statistics(before, Shown::Compute);
}
