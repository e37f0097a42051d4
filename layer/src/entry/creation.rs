//! `vkCreateInstance` and `vkCreateDevice` as the loader sees them: what the process does
//! once around the hooks that build the chains ([`hooks::instance`]). The first instance
//! makes the process's configuration ([`process_config`]); the first traced device sets up
//! the exit handler and the control socket.

use ash::vk;

use super::{process_config, process_exit};
use crate::hooks::{self, device_record, guarded};
use crate::loader::registry::dispatch_key;

/// # Safety
/// Vulkan's rules for `vkCreateInstance`, called by the loader with its chain info.
pub unsafe extern "system" fn create_instance(
    p_create_info: *const vk::InstanceCreateInfo<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_instance: *mut vk::Instance,
) -> vk::Result {
    // SAFETY: the loader passes a valid create info with its chain.
    let Some(create_info) = (unsafe { p_create_info.as_ref() }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // Reading the configuration here prints any complaint about it once, early; the
    // application's own settings for the layer are one of its sources.
    let _ = guarded("vkCreateInstance", || {
        // SAFETY: the application's create info and its pNext chain are valid.
        process_config::get_with_app(|| unsafe {
            hooks::layer_settings::from_create_info(create_info)
        })
    });
    // SAFETY: forwarded from the loader.
    unsafe { hooks::instance::create_instance(create_info, p_allocator, p_instance) }
}

/// # Safety
/// Vulkan's rules for `vkCreateDevice`, called by the loader with its chain info.
pub unsafe extern "system" fn create_device(
    physical_device: vk::PhysicalDevice,
    p_create_info: *const vk::DeviceCreateInfo<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_device: *mut vk::Device,
) -> vk::Result {
    let config = guarded("vkCreateDevice", process_config::get);
    // SAFETY: forwarded from the loader.
    let result = unsafe {
        hooks::instance::create_device(
            config,
            physical_device,
            p_create_info,
            p_allocator,
            p_device,
        )
    };
    if result == vk::Result::SUCCESS {
        // SAFETY: on success the device is written and live.
        let key = unsafe { dispatch_key(*p_device) };
        guarded("vkCreateDevice", || {
            if device_record::device(key).is_some_and(|d| d.tracer.is_some()) {
                // Now that the driver and the layers beneath are loaded and initialised.
                process_exit::register();
                if config.is_some_and(|c| c.control) {
                    crate::control::start(device_record::traced_devices);
                }
            }
        });
    }
    result
}
