//! The symbols the loader looks up in `libVkLayer_utrace.so` (loader interface version 2):
//! `vkNegotiateLoaderLayerInterfaceVersion`, the two `vkGet*ProcAddr` and the enumerate
//! functions. Everything else is reached through the proc-addr functions.
//!
//! They are thin wrappers: the loader finds them with `dlsym` on this library, but inside a
//! process that links `libvulkan.so.1` an exported name taken by address from within the
//! library may resolve to the loader's own function of the same name (ELF symbol
//! interposition), which would make the layer hand the loader its own trampoline and
//! recurse. So everything the layer hands out points at the internal functions
//! ([`super::proc_addr`], [`super::properties`]).

use std::ffi::c_char;

use ash::vk;
use ash_layer::NegotiateLayerInterface;

use super::proc_addr::{get_device_proc_addr, get_instance_proc_addr, negotiate};
use super::properties::{
    enumerate_device_extension_properties, enumerate_device_layer_properties,
    enumerate_instance_extension_properties, enumerate_instance_layer_properties,
};

/// # Safety
/// Called by the loader, with Vulkan's rules for this command.
#[no_mangle]
pub unsafe extern "system" fn vkNegotiateLoaderLayerInterfaceVersion(
    p_version_struct: *mut NegotiateLayerInterface,
) -> vk::Result {
    // SAFETY: forwarded from the loader.
    unsafe { negotiate(p_version_struct) }
}

/// # Safety
/// Called by the loader, with Vulkan's rules for this command.
#[no_mangle]
pub unsafe extern "system" fn vkGetInstanceProcAddr(
    instance: vk::Instance,
    p_name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: forwarded from the loader.
    unsafe { get_instance_proc_addr(instance, p_name) }
}

/// # Safety
/// Called by the loader, with Vulkan's rules for this command.
#[no_mangle]
pub unsafe extern "system" fn vkGetDeviceProcAddr(
    device: vk::Device,
    p_name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: forwarded from the loader.
    unsafe { get_device_proc_addr(device, p_name) }
}

/// # Safety
/// Called by the loader, with Vulkan's rules for this command.
#[no_mangle]
pub unsafe extern "system" fn vkEnumerateInstanceLayerProperties(
    p_property_count: *mut u32,
    p_properties: *mut vk::LayerProperties,
) -> vk::Result {
    // SAFETY: forwarded from the loader.
    unsafe { enumerate_instance_layer_properties(p_property_count, p_properties) }
}

/// # Safety
/// Called by the loader, with Vulkan's rules for this command.
#[no_mangle]
pub unsafe extern "system" fn vkEnumerateInstanceExtensionProperties(
    p_layer_name: *const c_char,
    p_property_count: *mut u32,
    p_properties: *mut vk::ExtensionProperties,
) -> vk::Result {
    // SAFETY: forwarded from the loader.
    unsafe { enumerate_instance_extension_properties(p_layer_name, p_property_count, p_properties) }
}

/// # Safety
/// Called by the loader, with Vulkan's rules for this command.
#[no_mangle]
pub unsafe extern "system" fn vkEnumerateDeviceLayerProperties(
    _physical_device: vk::PhysicalDevice,
    p_property_count: *mut u32,
    p_properties: *mut vk::LayerProperties,
) -> vk::Result {
    // SAFETY: forwarded from the loader.
    unsafe { enumerate_device_layer_properties(_physical_device, p_property_count, p_properties) }
}

/// # Safety
/// Called by the loader, with Vulkan's rules for this command.
#[no_mangle]
pub unsafe extern "system" fn vkEnumerateDeviceExtensionProperties(
    physical_device: vk::PhysicalDevice,
    p_layer_name: *const c_char,
    p_property_count: *mut u32,
    p_properties: *mut vk::ExtensionProperties,
) -> vk::Result {
    // SAFETY: forwarded from the loader.
    unsafe {
        enumerate_device_extension_properties(
            physical_device,
            p_layer_name,
            p_property_count,
            p_properties,
        )
    }
}
