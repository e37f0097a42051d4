//! What the layer asks of a device at `vkCreateDevice`: timeline semaphores, to learn when a
//! batch completed without a fence per submission, and (for Perfetto) calibrated timestamps,
//! to pair the GPU clock with the CPU's. The application's `VkDeviceCreateInfo`
//! is never modified: where the layer needs more, it builds a copy that prepends one
//! structure to the application's chain and, for Vulkan 1.0/1.1 devices, adds
//! `VK_KHR_timeline_semaphore` to the extension list.
//!
//! When the application's chain already holds a structure that controls the feature
//! (`VkPhysicalDeviceVulkan12Features` or `VkPhysicalDeviceTimelineSemaphoreFeatures`) the
//! layer keeps the application's choice: if it left the feature off, the layer uses fences.

use std::ffi::{c_char, CStr};

use ash::vk;

use super::completion::CompletionMode;
use crate::loader::dispatch::InstanceDispatch;

const TIMELINE_EXT: &CStr = c"VK_KHR_timeline_semaphore";

/// The create info the layer passes down, and how it will learn of completion.
pub struct DevicePlan {
    pub mode: CompletionMode,
    /// `VK_KHR/EXT_calibrated_timestamps` is enabled (by the application or the layer).
    pub calibrated: bool,
    /// `Some` when the layer changed the create info.
    patched: Option<Box<Patched>>,
}

struct Patched {
    base: vk::DeviceCreateInfo<'static>,
    /// Prepended to the application's chain when the layer enables timeline semaphores.
    timeline: Option<vk::PhysicalDeviceTimelineSemaphoreFeatures<'static>>,
    extensions: Vec<*const c_char>,
}

impl DevicePlan {
    /// The create info to pass down: the application's, or the layer's copy.
    pub fn create_info(
        &mut self,
        app: *const vk::DeviceCreateInfo<'_>,
    ) -> *const vk::DeviceCreateInfo<'static> {
        match self.patched.as_deref_mut() {
            None => app.cast(),
            Some(p) => {
                if let Some(timeline) = p.timeline.as_ref() {
                    p.base.p_next =
                        (timeline as *const vk::PhysicalDeviceTimelineSemaphoreFeatures).cast();
                }
                p.base.enabled_extension_count = p.extensions.len() as u32;
                p.base.pp_enabled_extension_names = p.extensions.as_ptr();
                &p.base
            }
        }
    }

    pub fn is_patched(&self) -> bool {
        self.patched.is_some()
    }

    /// Used when the device could not be created with the layer's additions.
    pub fn fence_only() -> DevicePlan {
        DevicePlan {
            mode: CompletionMode::Fence,
            calibrated: false,
            patched: None,
        }
    }
}

/// What the application's chain says about timeline semaphores.
#[derive(Debug, PartialEq, Eq)]
enum AppChoice {
    Enabled,
    Disabled,
    Unspecified,
}

/// What the layer asks for beyond the application's create info: timeline semaphores
/// (unless `force_fence`), and calibrated timestamps when `want_calibration` (Perfetto).
///
/// # Safety
/// `create_info` is the application's valid `VkDeviceCreateInfo` for `physical_device`.
pub unsafe fn plan(
    instance: &InstanceDispatch,
    instance_api: u32,
    physical_device: vk::PhysicalDevice,
    device_api: u32,
    create_info: &vk::DeviceCreateInfo<'_>,
    force_fence: bool,
    want_calibration: bool,
) -> DevicePlan {
    // SAFETY: the application's extension array holds `enabled_extension_count` names.
    let mut extensions: Vec<*const c_char> = unsafe {
        if create_info.enabled_extension_count == 0 {
            Vec::new()
        } else {
            std::slice::from_raw_parts(
                create_info.pp_enabled_extension_names,
                create_info.enabled_extension_count as usize,
            )
            .to_vec()
        }
    };
    let app_count = extensions.len();
    // SAFETY: each name is NUL-terminated.
    let app_names: Vec<&CStr> = extensions
        .iter()
        .map(|&n| unsafe { CStr::from_ptr(n) })
        .collect();
    let app_has = |name: &CStr| app_names.contains(&name);

    // Timeline semaphores.
    let mut mode = CompletionMode::Fence;
    let mut timeline = None;
    // SAFETY: the application's chain is valid for the duration of vkCreateDevice.
    match (force_fence, unsafe { app_choice(create_info) }) {
        (true, _) | (_, AppChoice::Disabled) => {}
        (false, AppChoice::Enabled) => mode = CompletionMode::Timeline,
        (false, AppChoice::Unspecified) => {
            let core = instance_api.min(device_api) >= vk::API_VERSION_1_2;
            // SAFETY: queries on a live physical device.
            if unsafe { timeline_supported(instance, physical_device, core) } {
                mode = CompletionMode::Timeline;
                let mut features =
                    vk::PhysicalDeviceTimelineSemaphoreFeatures::default().timeline_semaphore(true);
                features.p_next = create_info.p_next.cast_mut();
                timeline = Some(features);
                if !core && !app_has(TIMELINE_EXT) {
                    extensions.push(TIMELINE_EXT.as_ptr());
                }
            }
        }
    }

    // Calibrated timestamps.
    let mut calibrated = false;
    if want_calibration {
        if CALIBRATION_EXTS.iter().any(|e| app_has(e)) {
            calibrated = true;
        } else {
            // SAFETY: queries on a live physical device.
            let offered = CALIBRATION_EXTS.iter().find(|e| unsafe {
                device_has_extension(instance, physical_device, e)
                    && has_device_and_monotonic_domains(instance, physical_device)
            });
            if let Some(ext) = offered {
                extensions.push(ext.as_ptr());
                calibrated = true;
            }
        }
    }

    if timeline.is_none() && extensions.len() == app_count {
        return DevicePlan {
            mode,
            calibrated,
            patched: None,
        };
    }
    // A copy of the application's create info; p_next and the extension list are re-linked
    // in `create_info()` to point into the boxed copy.
    // SAFETY: only the lifetime changes; the copy is used during this vkCreateDevice call,
    // while everything it points to is the application's and still alive.
    let base = unsafe {
        std::mem::transmute::<vk::DeviceCreateInfo<'_>, vk::DeviceCreateInfo<'static>>(*create_info)
    };
    DevicePlan {
        mode,
        calibrated,
        patched: Some(Box::new(Patched {
            base,
            timeline,
            extensions,
        })),
    }
}

/// The calibrated-timestamps extensions, preferred first (they share their commands).
const CALIBRATION_EXTS: [&CStr; 2] = [
    c"VK_KHR_calibrated_timestamps",
    c"VK_EXT_calibrated_timestamps",
];

/// Whether the device can sample its own clock together with `CLOCK_MONOTONIC`.
///
/// # Safety
/// `physical_device` must belong to `instance`.
unsafe fn has_device_and_monotonic_domains(
    instance: &InstanceDispatch,
    physical_device: vk::PhysicalDevice,
) -> bool {
    let load = |name: &CStr| {
        // SAFETY: the next layer's GIPA with the live instance.
        unsafe { (instance.get_instance_proc_addr)(instance.handle, name.as_ptr()) }
    };
    let Some(f) = load(c"vkGetPhysicalDeviceCalibrateableTimeDomainsKHR")
        .or_else(|| load(c"vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"))
    else {
        return false;
    };
    // SAFETY: the KHR and EXT commands share this signature.
    let f = unsafe {
        std::mem::transmute::<
            unsafe extern "system" fn(),
            vk::PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsKHR,
        >(f)
    };
    let mut count = 0u32;
    // SAFETY: two-call idiom on a live physical device.
    let domains = unsafe {
        if f(physical_device, &mut count, std::ptr::null_mut()) != vk::Result::SUCCESS {
            return false;
        }
        let mut domains = vec![vk::TimeDomainKHR::default(); count as usize];
        if f(physical_device, &mut count, domains.as_mut_ptr()) != vk::Result::SUCCESS {
            return false;
        }
        domains.truncate(count as usize);
        domains
    };
    domains.contains(&vk::TimeDomainKHR::DEVICE)
        && domains.contains(&vk::TimeDomainKHR::CLOCK_MONOTONIC)
}

/// # Safety
/// `create_info`'s chain must be valid.
unsafe fn app_choice(create_info: &vk::DeviceCreateInfo<'_>) -> AppChoice {
    let mut next = create_info.p_next.cast::<vk::BaseInStructure>();
    while !next.is_null() {
        // SAFETY: every element of a valid chain starts with sType/pNext, and the structure
        // is read as the type its sType names.
        unsafe {
            match (*next).s_type {
                vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES => {
                    let f = &*next.cast::<vk::PhysicalDeviceVulkan12Features>();
                    return bool_choice(f.timeline_semaphore);
                }
                vk::StructureType::PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES => {
                    let f = &*next.cast::<vk::PhysicalDeviceTimelineSemaphoreFeatures>();
                    return bool_choice(f.timeline_semaphore);
                }
                _ => {}
            }
            next = (*next).p_next;
        }
    }
    AppChoice::Unspecified
}

fn bool_choice(b: vk::Bool32) -> AppChoice {
    if b == vk::TRUE {
        AppChoice::Enabled
    } else {
        AppChoice::Disabled
    }
}

/// # Safety
/// `physical_device` must belong to `instance`.
unsafe fn timeline_supported(
    instance: &InstanceDispatch,
    physical_device: vk::PhysicalDevice,
    core: bool,
) -> bool {
    let Some(features2) = instance.get_physical_device_features2 else {
        return false;
    };
    if !core {
        // SAFETY: forwarded from the caller.
        if !unsafe { device_has_extension(instance, physical_device, TIMELINE_EXT) } {
            return false;
        }
    }
    let mut timeline = vk::PhysicalDeviceTimelineSemaphoreFeatures::default();
    let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut timeline);
    // SAFETY: a valid output chain for a live physical device.
    unsafe { features2(physical_device, &mut features) };
    timeline.timeline_semaphore == vk::TRUE
}

/// # Safety
/// `physical_device` must belong to `instance`.
unsafe fn device_has_extension(
    instance: &InstanceDispatch,
    physical_device: vk::PhysicalDevice,
    name: &CStr,
) -> bool {
    let f = instance.fp_v1_0.enumerate_device_extension_properties;
    let mut count = 0;
    // SAFETY: two-call idiom on a live physical device.
    unsafe {
        if f(
            physical_device,
            std::ptr::null(),
            &mut count,
            std::ptr::null_mut(),
        ) != vk::Result::SUCCESS
        {
            return false;
        }
        let mut props = vec![vk::ExtensionProperties::default(); count as usize];
        if f(
            physical_device,
            std::ptr::null(),
            &mut count,
            props.as_mut_ptr(),
        ) != vk::Result::SUCCESS
        {
            return false;
        }
        props.truncate(count as usize);
        props
            .iter()
            .any(|p| p.extension_name_as_c_str() == Ok(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_choice_is_read_from_the_chain() {
        let info = vk::DeviceCreateInfo::default();
        // SAFETY: an empty chain.
        assert_eq!(unsafe { app_choice(&info) }, AppChoice::Unspecified);

        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let info = vk::DeviceCreateInfo::default().push_next(&mut v12);
        // SAFETY: a valid one-element chain.
        assert_eq!(unsafe { app_choice(&info) }, AppChoice::Enabled);

        let mut sync2 = vk::PhysicalDeviceSynchronization2Features::default();
        let mut tl = vk::PhysicalDeviceTimelineSemaphoreFeatures::default();
        let info = vk::DeviceCreateInfo::default()
            .push_next(&mut tl)
            .push_next(&mut sync2);
        // SAFETY: a valid two-element chain.
        assert_eq!(unsafe { app_choice(&info) }, AppChoice::Disabled);
    }
}
