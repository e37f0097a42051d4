//! Interface negotiation and the two `vkGet*ProcAddr`, through which the loader and the
//! application reach everything else.
//!
//! `vkGet*ProcAddr` answer with the layer's hook only for functions it intercepts, and only
//! when the next layer has the function too; otherwise they return the next layer's pointer
//! (NULL where it has none), so an extension the application did not enable stays NULL.

use std::ffi::{c_char, CStr};

use ash::vk;
use ash_layer::{NegotiateLayerInterface, NegotiateLayerStructType};

use super::creation::{create_device, create_instance};
use super::process_config;
use super::properties::{
    enumerate_device_extension_properties, enumerate_device_layer_properties,
    enumerate_instance_extension_properties, enumerate_instance_layer_properties,
};
use crate::hooks::{self, device_record};
use crate::loader::registry;

/// A function of the entry as the loader's untyped pointer.
macro_rules! own {
    ($f:path) => {
        // SAFETY: each function has the exact signature of the command it is returned for;
        // the loader casts the pointer back to that signature.
        Some(unsafe {
            std::mem::transmute::<*const (), unsafe extern "system" fn()>($f as *const ())
        })
    };
}

/// The entry's functions reachable with a null instance.
fn own_global(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkCreateInstance" => own!(create_instance),
        b"vkGetInstanceProcAddr" => own!(get_instance_proc_addr),
        b"vkEnumerateInstanceLayerProperties" => own!(enumerate_instance_layer_properties),
        b"vkEnumerateInstanceExtensionProperties" => {
            own!(enumerate_instance_extension_properties)
        }
        _ => None,
    }
}

/// The entry's functions for an instance and its physical devices.
fn own_instance(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkCreateDevice" => own!(create_device),
        b"vkEnumerateDeviceLayerProperties" => own!(enumerate_device_layer_properties),
        b"vkEnumerateDeviceExtensionProperties" => own!(enumerate_device_extension_properties),
        _ => None,
    }
}

/// The entry's device-level function.
fn own_device(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkGetDeviceProcAddr" => own!(get_device_proc_addr),
        _ => None,
    }
}

/// The loader interface version this layer implements.
const INTERFACE_VERSION: u32 = 2;

/// # Safety
/// Called by the loader with a valid `VkNegotiateLayerInterface`.
pub unsafe extern "system" fn negotiate(
    p_version_struct: *mut NegotiateLayerInterface,
) -> vk::Result {
    // SAFETY: the loader passes a valid structure or null, checked here.
    let Some(negotiate) = (unsafe { p_version_struct.as_mut() }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    if negotiate.s_type != NegotiateLayerStructType::INTERFACE_STRUCT
        || negotiate.loader_layer_interface_version < INTERFACE_VERSION
    {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    negotiate.loader_layer_interface_version = INTERFACE_VERSION;
    negotiate.pfn_get_instance_proc_addr = Some(get_instance_proc_addr);
    negotiate.pfn_get_device_proc_addr = Some(get_device_proc_addr);
    negotiate.pfn_get_physical_device_proc_addr = None;
    vk::Result::SUCCESS
}

/// # Safety
/// Vulkan's rules for `vkGetInstanceProcAddr`.
pub unsafe extern "system" fn get_instance_proc_addr(
    instance: vk::Instance,
    p_name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    if p_name.is_null() {
        return None;
    }
    // SAFETY: Vulkan requires a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(p_name) };
    if let Some(global) = own_global(name) {
        return Some(global);
    }
    if instance == vk::Instance::null() {
        return None;
    }
    // SAFETY: a non-null instance passed to GIPA is a live instance of this chain.
    let record = registry::instance(unsafe { registry::dispatch_key(instance) })?;
    // SAFETY: the next layer's GIPA with the application's arguments.
    let next = unsafe { (record.dispatch.get_instance_proc_addr)(instance, p_name) };
    next?;
    own_instance(name)
        .or_else(|| hooks::instance_hook(name))
        .or_else(|| own_device(name))
        .or_else(|| hooks::device_lifetime_hook(name))
        .or_else(|| {
            tracing_configured()
                .then(|| hooks::device_hook(name))
                .flatten()
        })
        .or(next)
}

/// # Safety
/// Vulkan's rules for `vkGetDeviceProcAddr`.
pub unsafe extern "system" fn get_device_proc_addr(
    device: vk::Device,
    p_name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    if p_name.is_null() || device == vk::Device::null() {
        return None;
    }
    // SAFETY: Vulkan requires a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(p_name) };
    // SAFETY: a non-null device passed to GDPA is a live device of this chain.
    let record = device_record::device(unsafe { registry::dispatch_key(device) })?;
    // SAFETY: the next layer's GDPA with the application's arguments.
    let next = unsafe { (record.dispatch.get_device_proc_addr)(device, p_name) };
    next?;
    own_device(name)
        .or_else(|| hooks::device_lifetime_hook(name))
        .or_else(|| {
            record
                .tracer
                .is_some()
                .then(|| hooks::device_hook(name))
                .flatten()
        })
        .or(next)
}

/// Whether devices get tracers: a trace was asked for, or the layer traces on demand.
fn tracing_configured() -> bool {
    let config = process_config::get();
    config.enabled || config.on_demand
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_picks_version_2_and_fills_entry_points() {
        let mut n = NegotiateLayerInterface {
            s_type: NegotiateLayerStructType::INTERFACE_STRUCT,
            p_next: std::ptr::null_mut(),
            loader_layer_interface_version: 5,
            pfn_get_instance_proc_addr: None,
            pfn_get_device_proc_addr: None,
            pfn_get_physical_device_proc_addr: None,
        };
        // SAFETY: a valid structure on the stack.
        let r = unsafe { negotiate(&mut n) };
        assert_eq!(r, vk::Result::SUCCESS);
        assert_eq!(n.loader_layer_interface_version, 2);
        assert!(n.pfn_get_instance_proc_addr.is_some() && n.pfn_get_device_proc_addr.is_some());

        n.loader_layer_interface_version = 1;
        // SAFETY: as above.
        let r = unsafe { negotiate(&mut n) };
        assert_eq!(r, vk::Result::ERROR_INITIALIZATION_FAILED);
    }

    #[test]
    fn the_entry_answers_instance_and_device_creation() {
        assert!(own_global(c"vkGetInstanceProcAddr").is_some());
        assert!(own_instance(c"vkCreateDevice").is_some());
        assert!(own_device(c"vkGetDeviceProcAddr").is_some());
        assert!(own_global(c"vkCreateInstance").is_some());
        assert!(own_instance(c"vkCreateInstance").is_none());
    }
}
