//! `vkCreateDevice` as the loader sees it: the hook ([`hooks::instance::create_device`]),
//! then what a process sets up once it traces a device.

use ash::vk;

use super::process_exit;
use crate::hooks::{self, device_record, guarded, process_config};
use crate::loader::registry::dispatch_key;

/// # Safety
/// Vulkan's rules for `vkCreateDevice`, called by the loader with its chain info.
pub unsafe extern "system" fn create_device(
    physical_device: vk::PhysicalDevice,
    p_create_info: *const vk::DeviceCreateInfo<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_device: *mut vk::Device,
) -> vk::Result {
    // SAFETY: forwarded from the loader.
    let result = unsafe {
        hooks::instance::create_device(physical_device, p_create_info, p_allocator, p_device)
    };
    if result == vk::Result::SUCCESS {
        // SAFETY: on success the device is written and live.
        let key = unsafe { dispatch_key(*p_device) };
        guarded("vkCreateDevice", || {
            if device_record::device(key).is_some_and(|d| d.tracer.is_some()) {
                // Now that the driver and the layers beneath are loaded and initialised.
                process_exit::register();
                if process_config::get().control {
                    crate::control::start(device_record::traced_devices);
                }
            }
        });
    }
    result
}
