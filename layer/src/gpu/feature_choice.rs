//! A device feature the layer may enable (timeline semaphores, host query reset): what the
//! application's create info says of it, and whether the device offers it; and whether the
//! device can pair its clock with `CLOCK_MONOTONIC` (calibrated timestamps).

use std::ffi::CStr;

use ash::vk;

use crate::loader::dispatch::InstanceDispatch;

const TIMELINE_EXT: &CStr = c"VK_KHR_timeline_semaphore";
const HOST_RESET_EXT: &CStr = c"VK_EXT_host_query_reset";

/// A device feature the layer may enable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Feature {
    TimelineSemaphore,
    HostQueryReset,
}

impl Feature {
    /// The extension that offers it before Vulkan 1.2.
    pub(super) fn extension(self) -> &'static CStr {
        match self {
            Feature::TimelineSemaphore => TIMELINE_EXT,
            Feature::HostQueryReset => HOST_RESET_EXT,
        }
    }
}

/// What the application's chain says about a feature.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum AppChoice {
    Enabled,
    Disabled,
    /// Left off in its `VkPhysicalDeviceVulkan12Features`: the layer may set it in a copy.
    DisabledIn12,
    Unspecified,
}

/// # Safety
/// `create_info`'s chain must be valid.
pub(super) unsafe fn app_choice(
    create_info: &vk::DeviceCreateInfo<'_>,
    feature: Feature,
) -> AppChoice {
    let mut next = create_info.p_next.cast::<vk::BaseInStructure>();
    while !next.is_null() {
        // SAFETY: every element of a valid chain starts with sType/pNext, and the structure
        // is read as the type its sType names.
        unsafe {
            match ((*next).s_type, feature) {
                (vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, _) => {
                    let f = &*next.cast::<vk::PhysicalDeviceVulkan12Features>();
                    let on = match feature {
                        Feature::TimelineSemaphore => f.timeline_semaphore,
                        Feature::HostQueryReset => f.host_query_reset,
                    };
                    return if on == vk::TRUE {
                        AppChoice::Enabled
                    } else {
                        AppChoice::DisabledIn12
                    };
                }
                (
                    vk::StructureType::PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
                    Feature::TimelineSemaphore,
                ) => {
                    let f = &*next.cast::<vk::PhysicalDeviceTimelineSemaphoreFeatures>();
                    return bool_choice(f.timeline_semaphore);
                }
                (
                    vk::StructureType::PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES,
                    Feature::HostQueryReset,
                ) => {
                    let f = &*next.cast::<vk::PhysicalDeviceHostQueryResetFeatures>();
                    return bool_choice(f.host_query_reset);
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
pub(super) unsafe fn supported(
    instance: &InstanceDispatch,
    physical_device: vk::PhysicalDevice,
    core: bool,
    feature: Feature,
) -> bool {
    let Some(features2) = instance.get_physical_device_features2 else {
        return false;
    };
    if !core {
        // SAFETY: forwarded from the caller.
        if !unsafe { device_has_extension(instance, physical_device, feature.extension()) } {
            return false;
        }
    }
    let mut timeline = vk::PhysicalDeviceTimelineSemaphoreFeatures::default();
    let mut host_reset = vk::PhysicalDeviceHostQueryResetFeatures::default();
    let mut features = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut timeline)
        .push_next(&mut host_reset);
    // SAFETY: a valid output chain for a live physical device.
    unsafe { features2(physical_device, &mut features) };
    match feature {
        Feature::TimelineSemaphore => timeline.timeline_semaphore == vk::TRUE,
        Feature::HostQueryReset => host_reset.host_query_reset == vk::TRUE,
    }
}

/// # Safety
/// `physical_device` must belong to `instance`.
pub(super) unsafe fn device_has_extension(
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

/// The calibrated-timestamps extensions, preferred first (they share their commands).
pub(super) const CALIBRATION_EXTS: [&CStr; 2] = [
    c"VK_KHR_calibrated_timestamps",
    c"VK_EXT_calibrated_timestamps",
];

/// Whether the device can sample its own clock together with `CLOCK_MONOTONIC`.
///
/// # Safety
/// `physical_device` must belong to `instance`.
pub(super) unsafe fn has_device_and_monotonic_domains(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a chain built by the test says.
    fn choice(info: &vk::DeviceCreateInfo<'_>, feature: Feature) -> AppChoice {
        // SAFETY: every chain the tests build is valid.
        unsafe { app_choice(info, feature) }
    }

    #[test]
    fn application_choice_is_read_from_the_chain() {
        use Feature::{HostQueryReset, TimelineSemaphore};
        let info = vk::DeviceCreateInfo::default();
        assert_eq!(choice(&info, TimelineSemaphore), AppChoice::Unspecified);
        assert_eq!(choice(&info, HostQueryReset), AppChoice::Unspecified);

        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let info = vk::DeviceCreateInfo::default().push_next(&mut v12);
        assert_eq!(choice(&info, TimelineSemaphore), AppChoice::Enabled);
        // The 1.2 structure holds both: host reset was left off there.
        assert_eq!(choice(&info, HostQueryReset), AppChoice::DisabledIn12);

        let mut sync2 = vk::PhysicalDeviceSynchronization2Features::default();
        let mut tl = vk::PhysicalDeviceTimelineSemaphoreFeatures::default();
        let mut hr = vk::PhysicalDeviceHostQueryResetFeatures::default().host_query_reset(true);
        let info = vk::DeviceCreateInfo::default()
            .push_next(&mut tl)
            .push_next(&mut hr)
            .push_next(&mut sync2);
        assert_eq!(choice(&info, TimelineSemaphore), AppChoice::Disabled);
        assert_eq!(choice(&info, HostQueryReset), AppChoice::Enabled);
    }
}
