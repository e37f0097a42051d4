//! The symbols the loader looks up in `libVkLayer_utrace.so` (loader interface version 2):
//! `vkNegotiateLoaderLayerInterfaceVersion`, the two `vkGet*ProcAddr` and the enumerate
//! functions. Everything else is reached through the proc-addr functions.
//!
//! `vkGet*ProcAddr` answer with the layer's hook only for functions it intercepts, and only
//! when the next layer has the function too; otherwise they return the next layer's pointer
//! (NULL where it has none), so an extension the application did not enable stays NULL.

use std::ffi::{c_char, CStr};

use ash::vk;
use ash_layer::{NegotiateLayerInterface, NegotiateLayerStructType};

use super::registry;
use crate::hooks;

/// A function of this file as the loader's untyped pointer.
macro_rules! own {
    ($f:path) => {
        // SAFETY: each function has the exact signature of the command it is returned for;
        // the loader casts the pointer back to that signature.
        Some(unsafe {
            std::mem::transmute::<*const (), unsafe extern "system" fn()>($f as *const ())
        })
    };
}

/// This file's functions reachable with a null instance.
fn own_global(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkGetInstanceProcAddr" => own!(get_instance_proc_addr),
        b"vkEnumerateInstanceLayerProperties" => own!(enumerate_instance_layer_properties),
        b"vkEnumerateInstanceExtensionProperties" => {
            own!(enumerate_instance_extension_properties)
        }
        _ => None,
    }
}

/// This file's functions for an instance's physical devices.
fn own_instance(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkEnumerateDeviceLayerProperties" => own!(enumerate_device_layer_properties),
        b"vkEnumerateDeviceExtensionProperties" => own!(enumerate_device_extension_properties),
        _ => None,
    }
}

/// This file's device-level function.
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
    if let Some(global) = own_global(name).or_else(|| hooks::global_hook(name)) {
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
    let record = registry::device(unsafe { registry::dispatch_key(device) })?;
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
    let config = crate::config::Config::get();
    config.enabled || config.on_demand
}

fn fill_properties<T: Copy>(items: &[T], count: *mut u32, out: *mut T) -> vk::Result {
    if count.is_null() {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    // SAFETY: Vulkan's two-call idiom: `count` is valid, `out` is null or holds `*count`.
    unsafe {
        if out.is_null() {
            *count = items.len() as u32;
            return vk::Result::SUCCESS;
        }
        let n = (*count as usize).min(items.len());
        std::ptr::copy_nonoverlapping(items.as_ptr(), out, n);
        *count = n as u32;
        if n < items.len() {
            vk::Result::INCOMPLETE
        } else {
            vk::Result::SUCCESS
        }
    }
}

fn layer_properties() -> vk::LayerProperties {
    let mut props = vk::LayerProperties {
        spec_version: vk::make_api_version(0, 1, 3, 239),
        implementation_version: crate::IMPLEMENTATION_VERSION,
        ..Default::default()
    };
    copy_cstr(&mut props.layer_name, crate::LAYER_NAME);
    copy_cstr(&mut props.description, crate::LAYER_DESCRIPTION);
    props
}

fn copy_cstr(dst: &mut [c_char], src: &CStr) {
    let bytes = src.to_bytes();
    let n = bytes.len().min(dst.len() - 1);
    for (d, s) in dst.iter_mut().zip(&bytes[..n]) {
        *d = *s as c_char;
    }
    dst[n] = 0;
}

fn is_this_layer(p_layer_name: *const c_char) -> bool {
    // SAFETY: a non-null layer name is NUL-terminated per Vulkan.
    !p_layer_name.is_null() && unsafe { CStr::from_ptr(p_layer_name) } == crate::LAYER_NAME
}

/// # Safety
/// Vulkan's rules for this command.
pub unsafe extern "system" fn enumerate_instance_layer_properties(
    p_property_count: *mut u32,
    p_properties: *mut vk::LayerProperties,
) -> vk::Result {
    fill_properties(&[layer_properties()], p_property_count, p_properties)
}

/// # Safety
/// Vulkan's rules for this command.
pub unsafe extern "system" fn enumerate_instance_extension_properties(
    p_layer_name: *const c_char,
    p_property_count: *mut u32,
    p_properties: *mut vk::ExtensionProperties,
) -> vk::Result {
    if is_this_layer(p_layer_name) {
        // VK_EXT_layer_settings: the application's VkLayerSettingsCreateInfoEXT configures
        // the layer (the manifest says so too). The loader passes the driver only the
        // extensions the driver has.
        let mut settings = vk::ExtensionProperties {
            spec_version: 2,
            ..Default::default()
        };
        for (to, from) in settings
            .extension_name
            .iter_mut()
            .zip(ash::ext::layer_settings::NAME.to_bytes())
        {
            *to = *from as std::ffi::c_char;
        }
        return fill_properties(&[settings], p_property_count, p_properties);
    }
    vk::Result::ERROR_LAYER_NOT_PRESENT
}

/// # Safety
/// Vulkan's rules for this command.
pub unsafe extern "system" fn enumerate_device_layer_properties(
    _physical_device: vk::PhysicalDevice,
    p_property_count: *mut u32,
    p_properties: *mut vk::LayerProperties,
) -> vk::Result {
    fill_properties(&[layer_properties()], p_property_count, p_properties)
}

/// # Safety
/// Vulkan's rules for this command.
pub unsafe extern "system" fn enumerate_device_extension_properties(
    physical_device: vk::PhysicalDevice,
    p_layer_name: *const c_char,
    p_property_count: *mut u32,
    p_properties: *mut vk::ExtensionProperties,
) -> vk::Result {
    if is_this_layer(p_layer_name) {
        return fill_properties(&[], p_property_count, p_properties);
    }
    if physical_device == vk::PhysicalDevice::null() {
        return vk::Result::ERROR_LAYER_NOT_PRESENT;
    }
    // SAFETY: a live physical device carries its instance's dispatch key.
    let Some(instance) = (unsafe { registry::instance_of(physical_device) }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: forwarded to the next layer with the application's arguments.
    unsafe {
        (instance
            .dispatch
            .fp_v1_0
            .enumerate_device_extension_properties)(
            physical_device,
            p_layer_name,
            p_property_count,
            p_properties,
        )
    }
}

// The exported symbols below are thin wrappers: the loader finds them with `dlsym` on this
// library, but inside a process that links `libvulkan.so.1` an exported name taken by
// address from within the library may resolve to the loader's own function of the same
// name (ELF symbol interposition), which would make the layer hand the loader its own
// trampoline and recurse. So everything the layer hands out points at the internal
// functions above.

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
    fn layer_properties_two_call_idiom() {
        let mut count = 0;
        // SAFETY: valid pointers.
        let r = unsafe { enumerate_instance_layer_properties(&mut count, std::ptr::null_mut()) };
        assert_eq!(r, vk::Result::SUCCESS);
        assert_eq!(count, 1);
        let mut props = [vk::LayerProperties::default(); 1];
        // SAFETY: `props` holds `count` elements.
        let r = unsafe { enumerate_instance_layer_properties(&mut count, props.as_mut_ptr()) };
        assert_eq!(r, vk::Result::SUCCESS);
        assert_eq!(props[0].layer_name_as_c_str().unwrap(), crate::LAYER_NAME);
        let mut zero = 0;
        // SAFETY: a count of zero with a non-null array is the INCOMPLETE case.
        let r = unsafe { enumerate_instance_layer_properties(&mut zero, props.as_mut_ptr()) };
        assert_eq!(r, vk::Result::INCOMPLETE);
    }

    #[test]
    fn instance_extensions_are_layer_settings_and_other_layers_are_not_ours() {
        let mut count = 7;
        // SAFETY: valid pointers, NUL-terminated names.
        unsafe {
            let r = enumerate_instance_extension_properties(
                crate::LAYER_NAME.as_ptr(),
                &mut count,
                std::ptr::null_mut(),
            );
            assert_eq!((r, count), (vk::Result::SUCCESS, 1));
            let mut props = [vk::ExtensionProperties::default(); 1];
            let r = enumerate_instance_extension_properties(
                crate::LAYER_NAME.as_ptr(),
                &mut count,
                props.as_mut_ptr(),
            );
            assert_eq!(r, vk::Result::SUCCESS);
            assert_eq!(
                props[0].extension_name_as_c_str(),
                Ok(ash::ext::layer_settings::NAME)
            );
            assert_eq!(props[0].spec_version, 2);
            let r = enumerate_instance_extension_properties(
                c"VK_LAYER_other".as_ptr(),
                &mut count,
                std::ptr::null_mut(),
            );
            assert_eq!(r, vk::Result::ERROR_LAYER_NOT_PRESENT);
        }
    }
}
