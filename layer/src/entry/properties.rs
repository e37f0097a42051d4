//! The enumerate functions: this layer's properties, and its one instance extension
//! (`VK_EXT_layer_settings`).

use std::ffi::{c_char, CStr};

use ash::vk;

use crate::loader::registry;

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

#[cfg(test)]
mod tests {
    use super::*;

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
        // The description names the version and commit first, as `utrace --version` does.
        let description = props[0].description_as_c_str().unwrap().to_str().unwrap();
        let version = format!("utrace {}: ", crate::VERSION);
        assert!(description.starts_with(&version), "{description}");
        assert!(crate::VERSION.starts_with(env!("CARGO_PKG_VERSION")));
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
