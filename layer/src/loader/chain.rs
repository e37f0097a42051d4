//! The `VkLayer{Instance,Device}CreateInfo` structures the loader puts in the `pNext` chain
//! of `vkCreateInstance` / `vkCreateDevice` (types from `ash-layer`).

use ash::vk;
use ash_layer::LayerFunction;

/// The next layer's entry points, taken from the `VK_LAYER_LINK_INFO` element.
pub struct NextInstance {
    pub get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
}

pub struct NextDevice {
    pub get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    pub get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
    pub set_device_loader_data: Option<ash_layer::PFN_vkSetDeviceLoaderData>,
}

/// Finds the `VK_LAYER_LINK_INFO` element, reads the next layer's functions and advances the
/// chain to the next layer, as the loader requires before calling down.
///
/// # Safety
/// `create_info` must be the `VkInstanceCreateInfo` the loader passed to this layer.
pub unsafe fn take_instance_link(create_info: &vk::InstanceCreateInfo) -> Option<NextInstance> {
    // SAFETY: the loader's chain elements are valid for the duration of vkCreateInstance.
    let link =
        unsafe { ash_layer::get_instance_chain_info(create_info, LayerFunction::LAYER_LINK_INFO) }?;
    // SAFETY: the element was found by its sType and function, so `u.p_layer_info` is the
    // active union member; the loader owns the element and expects this layer to advance it.
    unsafe {
        let link = link.as_ptr();
        let layer_info = (*link).u.p_layer_info;
        if layer_info.is_null() {
            return None;
        }
        let gipa = (*layer_info).pfn_next_get_instance_proc_addr?;
        (*link).u.p_layer_info = (*layer_info).p_next;
        Some(NextInstance {
            get_instance_proc_addr: gipa,
        })
    }
}

/// As [`take_instance_link`], for devices; also picks up the loader's
/// `vkSetDeviceLoaderData` callback for dispatchable objects the layer creates.
///
/// # Safety
/// `create_info` must be the `VkDeviceCreateInfo` the loader passed to this layer.
pub unsafe fn take_device_link(create_info: &vk::DeviceCreateInfo) -> Option<NextDevice> {
    // SAFETY: the loader's chain elements are valid for the duration of vkCreateDevice, and
    // each union member is read only for the element whose `function` selects it.
    unsafe {
        let callback =
            ash_layer::get_device_chain_info(create_info, LayerFunction::LOADER_DATA_CALLBACK)
                .and_then(|info| (*info.as_ptr()).u.pfn_set_device_loader_data);
        let link =
            ash_layer::get_device_chain_info(create_info, LayerFunction::LAYER_LINK_INFO)?.as_ptr();
        let layer_info = (*link).u.p_layer_info;
        if layer_info.is_null() {
            return None;
        }
        let gipa = (*layer_info).pfn_next_get_instance_proc_addr?;
        let gdpa = (*layer_info).pfn_next_get_device_proc_addr?;
        (*link).u.p_layer_info = (*layer_info).p_next;
        Some(NextDevice {
            get_instance_proc_addr: gipa,
            get_device_proc_addr: gdpa,
            set_device_loader_data: callback,
        })
    }
}
