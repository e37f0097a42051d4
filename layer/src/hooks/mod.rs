//! The entry points the layer intercepts, grouped by the object they act on. Each hook does
//! its own work inside [`guarded`] and calls down outside it, so a fault in the layer never
//! keeps a call from reaching the driver and no panic crosses the FFI boundary.

/// The device record of a dispatchable handle, or `return $otherwise` from the hook. A
/// handle the layer never saw cannot normally reach a hook (the loader only installs hooks
/// for devices created through this layer); if one does, the hook gives up quietly rather
/// than panic across the FFI boundary.
// Defined before the submodules so that they see it (macro_rules scope is textual).
macro_rules! device_or {
    ($handle:expr) => {
        device_or!($handle, ())
    };
    ($handle:expr, $otherwise:expr) => {
        // SAFETY: the application passes a live dispatchable object of this chain.
        match unsafe { device_of($handle) } {
            Some(dev) => dev,
            None => return $otherwise,
        }
    };
}

pub mod command_buffer;
pub mod device;
pub mod instance;
pub mod queue;

use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ash::vk;

/// Runs the layer's own part of a hook. A panic is logged (with the hook's name) and turned
/// into `None`; the caller then behaves as if tracing were off for this call.
pub fn guarded<R>(what: &str, f: impl FnOnce() -> R) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            log::error!("internal error in {what}: {msg}; the call goes on untraced");
            None
        }
    }
}

macro_rules! hook {
    ($f:path) => {
        // SAFETY: every hook has the exact signature of the command it is registered for;
        // the loader casts the pointer back to that signature.
        Some(unsafe {
            std::mem::transmute::<*const (), unsafe extern "system" fn()>($f as *const ())
        })
    };
}

/// Functions reachable with a null instance.
pub fn global_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    use crate::loader::exports as e;
    match name.to_bytes() {
        b"vkGetInstanceProcAddr" => hook!(e::get_instance_proc_addr),
        b"vkCreateInstance" => hook!(instance::create_instance),
        b"vkEnumerateInstanceLayerProperties" => hook!(e::enumerate_instance_layer_properties),
        b"vkEnumerateInstanceExtensionProperties" => {
            hook!(e::enumerate_instance_extension_properties)
        }
        _ => None,
    }
}

/// Instance-level functions the layer always intercepts.
pub fn instance_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    use crate::loader::exports as e;
    match name.to_bytes() {
        b"vkDestroyInstance" => hook!(instance::destroy_instance),
        b"vkCreateDevice" => hook!(instance::create_device),
        b"vkEnumerateDeviceLayerProperties" => hook!(e::enumerate_device_layer_properties),
        b"vkEnumerateDeviceExtensionProperties" => hook!(e::enumerate_device_extension_properties),
        _ => None,
    }
}

/// Device functions the layer intercepts even when it does not trace: it must know when a
/// device goes away.
pub fn device_lifetime_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    use crate::loader::exports as e;
    match name.to_bytes() {
        b"vkGetDeviceProcAddr" => hook!(e::get_device_proc_addr),
        b"vkDestroyDevice" => hook!(device::destroy_device),
        _ => None,
    }
}

/// Device functions intercepted while tracing is configured.
pub fn device_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    use command_buffer as cb;
    match name.to_bytes() {
        b"vkGetDeviceQueue" => hook!(device::get_device_queue),
        b"vkGetDeviceQueue2" => hook!(device::get_device_queue2),
        b"vkDeviceWaitIdle" => hook!(device::device_wait_idle),
        b"vkCreateCommandPool" => hook!(cb::create_command_pool),
        b"vkResetCommandPool" => hook!(cb::reset_command_pool),
        b"vkDestroyCommandPool" => hook!(cb::destroy_command_pool),
        b"vkAllocateCommandBuffers" => hook!(cb::allocate_command_buffers),
        b"vkFreeCommandBuffers" => hook!(cb::free_command_buffers),
        b"vkResetCommandBuffer" => hook!(cb::reset_command_buffer),
        b"vkBeginCommandBuffer" => hook!(cb::begin_command_buffer),
        b"vkEndCommandBuffer" => hook!(cb::end_command_buffer),
        b"vkQueueSubmit" => hook!(queue::queue_submit),
        b"vkQueueSubmit2" => hook!(queue::queue_submit2),
        b"vkQueueSubmit2KHR" => hook!(queue::queue_submit2_khr),
        b"vkQueuePresentKHR" => hook!(queue::queue_present),
        b"vkQueueWaitIdle" => hook!(queue::queue_wait_idle),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_intercepted_names_resolve() {
        assert!(global_hook(c"vkCreateInstance").is_some());
        assert!(global_hook(c"vkCreateDevice").is_none());
        assert!(instance_hook(c"vkCreateDevice").is_some());
        assert!(device_hook(c"vkQueueSubmit2KHR").is_some());
        assert!(device_hook(c"vkCmdDraw").is_none());
        assert!(device_lifetime_hook(c"vkDestroyDevice").is_some());
    }
}
