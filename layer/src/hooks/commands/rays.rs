//! Ray tracing dispatches (VK_KHR_ray_tracing_pipeline and its maintenance1), each bracketed
//! by `trace_rays` and naming the ray tracing pipeline bound, as draws name theirs.

use ash::vk;

use super::bracketed;
use crate::trace::tracepoints::*;

bracketed! {
    /// `vkCmdTraceRaysKHR`.
    cmd_trace_rays(cb, raygen: *const vk::StridedDeviceAddressRegionKHR, miss: *const vk::StridedDeviceAddressRegionKHR, hit: *const vk::StridedDeviceAddressRegionKHR, callable: *const vk::StridedDeviceAddressRegionKHR, width: u32, height: u32, depth: u32) = ext cmd_trace_rays;
    switch toggle::TRACE_RAYS;
    before |r, t| { let p = t.pipelines.ray_tracing; trace_start_trace_rays(r, t, width, height, depth, false, p) };
    after |r, t| trace_end_trace_rays(r, t);
}

bracketed! {
    /// `vkCmdTraceRaysIndirectKHR`: the dimensions are read by the device.
    cmd_trace_rays_indirect(cb, raygen: *const vk::StridedDeviceAddressRegionKHR, miss: *const vk::StridedDeviceAddressRegionKHR, hit: *const vk::StridedDeviceAddressRegionKHR, callable: *const vk::StridedDeviceAddressRegionKHR, address: vk::DeviceAddress) = ext cmd_trace_rays_indirect;
    switch toggle::TRACE_RAYS;
    before |r, t| { let p = t.pipelines.ray_tracing; trace_start_trace_rays(r, t, 0, 0, 0, true, p) };
    after |r, t| trace_end_trace_rays(r, t);
}

bracketed! {
    /// `vkCmdTraceRaysIndirect2KHR`: the shader binding table and dimensions are read by the
    /// device.
    cmd_trace_rays_indirect2(cb, address: vk::DeviceAddress) = ext cmd_trace_rays_indirect2;
    switch toggle::TRACE_RAYS;
    before |r, t| { let p = t.pipelines.ray_tracing; trace_start_trace_rays(r, t, 0, 0, 0, true, p) };
    after |r, t| trace_end_trace_rays(r, t);
}
