//! Compute dispatches.

use ash::vk;
use ash::vk::Handle;

use super::bracketed;
use crate::trace::tracepoints::*;

bracketed! {
    /// `vkCmdDispatch`.
    cmd_dispatch(cb, x: u32, y: u32, z: u32) = core cmd_dispatch;
    switch toggle::DISPATCH;
    bracket dispatch |t| (x, y, z, 0, 0, 0, t.pipelines.compute);
    counted Compute;
}

bracketed! {
    /// `vkCmdDispatchBase` (and `vkCmdDispatchBaseKHR`).
    cmd_dispatch_base(cb, base_x: u32, base_y: u32, base_z: u32, x: u32, y: u32, z: u32) = ext cmd_dispatch_base;
    switch toggle::DISPATCH;
    bracket dispatch |t| (x, y, z, base_x, base_y, base_z, t.pipelines.compute);
    counted Compute;
}

bracketed! {
    /// `vkCmdDispatchIndirect`.
    cmd_dispatch_indirect(cb, buffer: vk::Buffer, offset: u64) = core cmd_dispatch_indirect;
    switch toggle::DISPATCH_INDIRECT;
    bracket dispatch_indirect |t| (buffer.as_raw(), offset, t.pipelines.compute);
    counted Compute;
}
