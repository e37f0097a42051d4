//! The commands that name a queue, given the driver's queue in place of the AMD shape's
//! extra families' (see [`super::extra_families`]), and the hooks for the
//! families' commands.

use std::ffi::CStr;

use ash::vk;

use super::extra_families::{driver_object, driver_queue, fake_queue, is_extra, DRIVER_FAMILY};
use super::family_indices::{
    cmd_pipeline_barrier, cmd_pipeline_barrier2, cmd_wait_events, create_command_pool,
    create_image, create_swapchain,
};
use crate::faults;

/// The hook for `name`, for the AMD shape's extra families.
pub fn lookup(name: &str) -> vk::PFN_vkVoidFunction {
    match name {
        "vkGetDeviceQueue" => hook!(get_device_queue),
        "vkGetDeviceQueue2" => hook!(get_device_queue2),
        "vkQueueSubmit" => hook!(queue_submit),
        "vkQueueSubmit2" | "vkQueueSubmit2KHR" => hook!(queue_submit2),
        "vkQueueWaitIdle" => hook!(queue_wait_idle),
        "vkQueueBindSparse" => hook!(queue_bind_sparse),
        "vkQueuePresentKHR" => hook!(queue_present),
        "vkQueueBeginDebugUtilsLabelEXT" => hook!(queue_begin_label),
        "vkQueueEndDebugUtilsLabelEXT" => hook!(queue_end_label),
        "vkQueueInsertDebugUtilsLabelEXT" => hook!(queue_insert_label),
        "vkSetDebugUtilsObjectNameEXT" => hook!(set_object_name),
        "vkCreateCommandPool" => hook!(create_command_pool),
        "vkCreateImage" => hook!(create_image),
        "vkCreateSwapchainKHR" => hook!(create_swapchain),
        "vkCmdPipelineBarrier" => hook!(cmd_pipeline_barrier),
        "vkCmdPipelineBarrier2" | "vkCmdPipelineBarrier2KHR" => hook!(cmd_pipeline_barrier2),
        "vkCmdWaitEvents" => hook!(cmd_wait_events),
        _ => None,
    }
}

/// The names [`lookup`] hooks, resolved from the next layer at device creation.
pub const COMMANDS: &[&CStr] = &[
    c"vkGetDeviceQueue",
    c"vkGetDeviceQueue2",
    c"vkQueueWaitIdle",
    c"vkQueueBindSparse",
    c"vkQueuePresentKHR",
    c"vkQueueBeginDebugUtilsLabelEXT",
    c"vkQueueEndDebugUtilsLabelEXT",
    c"vkQueueInsertDebugUtilsLabelEXT",
    c"vkSetDebugUtilsObjectNameEXT",
    c"vkCreateCommandPool",
    c"vkCreateImage",
    c"vkCreateSwapchainKHR",
    c"vkCmdPipelineBarrier",
    c"vkCmdPipelineBarrier2",
    c"vkCmdWaitEvents",
];

unsafe extern "system" fn get_device_queue(
    device: vk::Device,
    family: u32,
    index: u32,
    out: *mut vk::Queue,
) {
    let (asked, extra) = (family, is_extra(family));
    let (family, index) = if extra {
        (DRIVER_FAMILY, 0)
    } else {
        (family, index)
    };
    device_down!(
        device,
        c"vkGetDeviceQueue",
        vk::PFN_vkGetDeviceQueue,
        (device, family, index, out)
    );
    if extra {
        // SAFETY: the driver's queue, just written.
        unsafe { *out = fake_queue(asked, *out) };
    }
}

unsafe extern "system" fn get_device_queue2(
    device: vk::Device,
    info: *const vk::DeviceQueueInfo2<'_>,
    out: *mut vk::Queue,
) {
    // SAFETY: the caller's valid info, copied.
    let mut own = unsafe { *info };
    let (asked, extra) = (own.queue_family_index, is_extra(own.queue_family_index));
    if extra {
        own.queue_family_index = DRIVER_FAMILY;
        own.queue_index = 0;
    }
    device_down!(
        device,
        c"vkGetDeviceQueue2",
        vk::PFN_vkGetDeviceQueue2,
        (device, &own, out)
    );
    if extra {
        // SAFETY: the driver's queue, just written.
        unsafe { *out = fake_queue(asked, *out) };
    }
}

/// A command given a queue: the driver's queue, under the queue lock.
macro_rules! on_queue {
    ($hook:ident, $name:literal, $pfn:ty, ($($arg:ident: $ty:ty),*) -> $ret:ty, $fail:expr) => {
        unsafe extern "system" fn $hook(queue: vk::Queue $(, $arg: $ty)*) -> $ret {
            let (driver, _lock) = driver_queue(queue);
            device_down!(queue, $name, $pfn, (driver $(, $arg)*)).unwrap_or($fail)
        }
    };
}

const LOST: vk::Result = vk::Result::ERROR_DEVICE_LOST;
on_queue!(submit_on_driver_queue, c"vkQueueSubmit", vk::PFN_vkQueueSubmit,
    (count: u32, submits: *const vk::SubmitInfo<'_>, fence: vk::Fence) -> vk::Result, LOST);
on_queue!(submit2_on_driver_queue, c"vkQueueSubmit2", vk::PFN_vkQueueSubmit2,
    (count: u32, submits: *const vk::SubmitInfo2<'_>, fence: vk::Fence) -> vk::Result, LOST);
on_queue!(queue_wait_idle, c"vkQueueWaitIdle", vk::PFN_vkQueueWaitIdle, () -> vk::Result, LOST);
on_queue!(queue_bind_sparse, c"vkQueueBindSparse", vk::PFN_vkQueueBindSparse,
    (count: u32, infos: *const vk::BindSparseInfo<'_>, fence: vk::Fence) -> vk::Result, LOST);
on_queue!(queue_present, c"vkQueuePresentKHR", vk::PFN_vkQueuePresentKHR,
    (info: *const vk::PresentInfoKHR<'_>) -> vk::Result, LOST);
on_queue!(queue_begin_label, c"vkQueueBeginDebugUtilsLabelEXT", vk::PFN_vkQueueBeginDebugUtilsLabelEXT,
    (label: *const vk::DebugUtilsLabelEXT<'_>) -> (), ());
on_queue!(queue_end_label, c"vkQueueEndDebugUtilsLabelEXT", vk::PFN_vkQueueEndDebugUtilsLabelEXT,
    () -> (), ());
on_queue!(queue_insert_label, c"vkQueueInsertDebugUtilsLabelEXT", vk::PFN_vkQueueInsertDebugUtilsLabelEXT,
    (label: *const vk::DebugUtilsLabelEXT<'_>) -> (), ());

unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    if let Some(result) = faults::check("vkQueueSubmit") {
        return result;
    }
    // SAFETY: the caller's arguments, passed on.
    unsafe { submit_on_driver_queue(queue, count, submits, fence) }
}

unsafe extern "system" fn queue_submit2(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    if let Some(result) = faults::check("vkQueueSubmit2") {
        return result;
    }
    // SAFETY: the caller's arguments, passed on.
    unsafe { submit2_on_driver_queue(queue, count, submits, fence) }
}

unsafe extern "system" fn set_object_name(
    device: vk::Device,
    info: *const vk::DebugUtilsObjectNameInfoEXT<'_>,
) -> vk::Result {
    // SAFETY: the caller's valid info, copied.
    let mut own = unsafe { *info };
    own.object_handle = driver_object(own.object_type, own.object_handle);
    device_down!(
        device,
        c"vkSetDebugUtilsObjectNameEXT",
        vk::PFN_vkSetDebugUtilsObjectNameEXT,
        (device, &own)
    )
    .unwrap_or(vk::Result::ERROR_DEVICE_LOST)
}
