//! What the physical device says of itself, in the shape's words: its timestamp period and
//! valid bits, and for the Vulkan 1.1 shape its version, extensions and features (and with
//! `UTRACE_PERF_QUERY=1` the extension and feature of `crate::perf_query`).

use std::ffi::{c_char, CStr};

use ash::vk;

use super::{extra_families, shape, Shape};
use crate::perf_query;

/// Extensions a Vulkan 1.1-class device does not have.
const NOT_ON_1_1: &[&CStr] = &[
    c"VK_EXT_calibrated_timestamps",
    c"VK_KHR_calibrated_timestamps",
    c"VK_EXT_host_query_reset",
    c"VK_KHR_timeline_semaphore",
];

/// `UTRACE_DEVICE_TYPE=gpu` without a shape: the device says it is a discrete GPU and
/// nothing else changes (utrace then reads a resubmitted command buffer's last run on the
/// host, as on a real GPU, where on Lavapipe's CPU device type it has the GPU copy it).
fn gpu_type_only() -> bool {
    static GPU: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *GPU.get_or_init(|| std::env::var("UTRACE_DEVICE_TYPE").is_ok_and(|v| v == "gpu"))
}

/// The shape's properties, or only the device type (see [`gpu_type_only`]).
fn apply(props: &mut vk::PhysicalDeviceProperties) {
    match shape() {
        Some(s) => apply_properties(s, props),
        None if gpu_type_only() => props.device_type = vk::PhysicalDeviceType::DISCRETE_GPU,
        None => {}
    }
}

fn apply_properties(s: &Shape, props: &mut vk::PhysicalDeviceProperties) {
    props.limits.timestamp_period = s.period;
    // A GPU, not a CPU device: utrace reads a resubmitted command buffer's last run on the
    // host there (a real GPU's driver reads available queries without waiting for the
    // device), which the shaped tests then cover.
    props.device_type = if s.name == "amd" {
        vk::PhysicalDeviceType::DISCRETE_GPU
    } else {
        vk::PhysicalDeviceType::INTEGRATED_GPU
    };
    if s.v1_1 {
        props.api_version = vk::make_api_version(0, 1, 1, vk::api_version_patch(props.api_version));
    }
}

fn apply_family(s: &Shape, family: &mut vk::QueueFamilyProperties) {
    if family.timestamp_valid_bits > 0 {
        family.timestamp_valid_bits = s.valid_bits;
    }
}

pub unsafe extern "system" fn get_physical_device_properties(
    physical: vk::PhysicalDevice,
    props: *mut vk::PhysicalDeviceProperties,
) {
    instance_down!(
        physical,
        c"vkGetPhysicalDeviceProperties",
        vk::PFN_vkGetPhysicalDeviceProperties,
        (physical, props)
    );
    // SAFETY: the caller's output structure, just filled.
    unsafe { apply(&mut *props) };
}

pub unsafe extern "system" fn get_physical_device_properties2(
    physical: vk::PhysicalDevice,
    props: *mut vk::PhysicalDeviceProperties2<'_>,
) {
    instance_down!(
        physical,
        c"vkGetPhysicalDeviceProperties2",
        vk::PFN_vkGetPhysicalDeviceProperties2,
        (physical, props)
    );
    // SAFETY: the caller's output structure, just filled.
    unsafe { apply(&mut (*props).properties) };
}

/// The driver's families, shaped, then the AMD shape's extra ones where there is room:
/// `fill(count, props)` calls the driver with the two-call idiom's arguments; `extra`
/// writes the nth extra family into an element.
///
/// # Safety
/// `count` is valid; `props` null or room for `*count` elements.
unsafe fn families<T>(
    count: *mut u32,
    props: *mut T,
    mut fill: impl FnMut(*mut u32, *mut T),
    shape_one: impl Fn(&mut T),
    extra: impl Fn(u32, &mut T),
) {
    let mut driver = 0u32;
    fill(&mut driver, std::ptr::null_mut());
    extra_families::set_driver_families(driver);
    let listed = driver + extra_families::listed();
    // SAFETY: as the caller promises.
    unsafe {
        if props.is_null() {
            *count = listed;
            return;
        }
        let room = *count;
        let mut written = room.min(driver);
        fill(&mut written, props);
        let families = std::slice::from_raw_parts_mut(props, room as usize);
        families[..written as usize].iter_mut().for_each(&shape_one);
        if written == driver {
            while written < room.min(listed) {
                extra(written - driver, &mut families[written as usize]);
                written += 1;
            }
        }
        *count = written;
    }
}

pub unsafe extern "system" fn get_physical_device_queue_family_properties(
    physical: vk::PhysicalDevice,
    count: *mut u32,
    props: *mut vk::QueueFamilyProperties,
) {
    let Some(s) = shape() else { return };
    let fill = |count: *mut u32, props: *mut vk::QueueFamilyProperties| {
        instance_down!(
            physical,
            c"vkGetPhysicalDeviceQueueFamilyProperties",
            vk::PFN_vkGetPhysicalDeviceQueueFamilyProperties,
            (physical, count, props)
        );
    };
    // SAFETY: the caller's two-call arguments.
    unsafe {
        families(
            count,
            props,
            fill,
            |f| apply_family(s, f),
            |nth, f| *f = extra_families::properties(nth),
        )
    };
}

pub unsafe extern "system" fn get_physical_device_queue_family_properties2(
    physical: vk::PhysicalDevice,
    count: *mut u32,
    props: *mut vk::QueueFamilyProperties2<'_>,
) {
    let Some(s) = shape() else { return };
    let fill = |count: *mut u32, props: *mut vk::QueueFamilyProperties2<'_>| {
        instance_down!(
            physical,
            c"vkGetPhysicalDeviceQueueFamilyProperties2",
            vk::PFN_vkGetPhysicalDeviceQueueFamilyProperties2,
            (physical, count, props)
        );
    };
    // SAFETY: the caller's two-call arguments. The extra families' own chains (if the caller
    // gave one) is left as the caller set it.
    unsafe {
        families(
            count,
            props,
            fill,
            |f| apply_family(s, &mut f.queue_family_properties),
            |nth, f| f.queue_family_properties = extra_families::properties(nth),
        )
    };
}

/// The extra families present nothing.
pub unsafe extern "system" fn get_physical_device_surface_support(
    physical: vk::PhysicalDevice,
    family: u32,
    surface: vk::SurfaceKHR,
    supported: *mut vk::Bool32,
) -> vk::Result {
    if extra_families::is_extra(family) {
        // SAFETY: the caller's output.
        unsafe { *supported = vk::FALSE };
        return vk::Result::SUCCESS;
    }
    instance_down!(
        physical,
        c"vkGetPhysicalDeviceSurfaceSupportKHR",
        vk::PFN_vkGetPhysicalDeviceSurfaceSupportKHR,
        (physical, family, surface, supported)
    )
    .unwrap_or(vk::Result::ERROR_SURFACE_LOST_KHR)
}

/// The 1.1 shape hides the extensions of later devices, and `UTRACE_PERF_QUERY=1` adds
/// VK_KHR_performance_query (the list is made whole, then handed out with the usual
/// two-call rules).
pub unsafe extern "system" fn enumerate_device_extension_properties(
    physical: vk::PhysicalDevice,
    layer: *const c_char,
    count: *mut u32,
    props: *mut vk::ExtensionProperties,
) -> vk::Result {
    type Pfn = vk::PFN_vkEnumerateDeviceExtensionProperties;
    let name = c"vkEnumerateDeviceExtensionProperties";
    let v1_1 = shape().is_some_and(|s| s.v1_1);
    if !layer.is_null() || !(v1_1 || perf_query::enabled()) {
        return instance_down!(physical, name, Pfn, (physical, layer, count, props))
            .unwrap_or(vk::Result::ERROR_INITIALIZATION_FAILED);
    }
    let mut n = 0u32;
    let r = instance_down!(
        physical,
        name,
        Pfn,
        (physical, layer, &mut n, std::ptr::null_mut())
    );
    if r != Some(vk::Result::SUCCESS) {
        return r.unwrap_or(vk::Result::ERROR_INITIALIZATION_FAILED);
    }
    let mut all = vec![vk::ExtensionProperties::default(); n as usize];
    let r = instance_down!(
        physical,
        name,
        Pfn,
        (physical, layer, &mut n, all.as_mut_ptr())
    );
    if r != Some(vk::Result::SUCCESS) {
        return r.unwrap_or(vk::Result::ERROR_INITIALIZATION_FAILED);
    }
    all.truncate(n as usize);
    all.retain(|e| {
        e.extension_name_as_c_str()
            .is_ok_and(|name| !(v1_1 && NOT_ON_1_1.contains(&name)))
    });
    let has =
        |e: &vk::ExtensionProperties| e.extension_name_as_c_str() == Ok(perf_query::EXTENSION);
    if perf_query::enabled() && !all.iter().any(has) {
        all.push(perf_query::extension());
    }
    // SAFETY: the caller's count, and room for `*count` elements when `props` is not null.
    unsafe {
        if props.is_null() {
            *count = all.len() as u32;
            return vk::Result::SUCCESS;
        }
        let room = (*count as usize).min(all.len());
        std::ptr::copy_nonoverlapping(all.as_ptr(), props, room);
        *count = room as u32;
        if room < all.len() {
            vk::Result::INCOMPLETE
        } else {
            vk::Result::SUCCESS
        }
    }
}

/// The 1.1 shape says no to host query reset and timeline semaphores wherever they are
/// asked for.
pub unsafe extern "system" fn get_physical_device_features2(
    physical: vk::PhysicalDevice,
    features: *mut vk::PhysicalDeviceFeatures2<'_>,
) {
    instance_down!(
        physical,
        c"vkGetPhysicalDeviceFeatures2",
        vk::PFN_vkGetPhysicalDeviceFeatures2,
        (physical, features)
    );
    if perf_query::enabled() {
        // SAFETY: the caller's valid output chain.
        unsafe { perf_query::fill_features(features) };
    }
    if crate::perf_inherited::enabled() {
        // SAFETY: as above.
        unsafe { crate::perf_inherited::offer(features) };
    }
    if !shape().is_some_and(|s| s.v1_1) {
        return;
    }
    // SAFETY: the caller's valid chain; each structure read as the type its sType names.
    unsafe {
        let mut next = (*features).p_next.cast::<vk::BaseOutStructure>();
        while !next.is_null() {
            match (*next).s_type {
                vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES => {
                    let f = &mut *next.cast::<vk::PhysicalDeviceVulkan12Features>();
                    f.host_query_reset = vk::FALSE;
                    f.timeline_semaphore = vk::FALSE;
                }
                vk::StructureType::PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES => {
                    (*next.cast::<vk::PhysicalDeviceHostQueryResetFeatures>()).host_query_reset =
                        vk::FALSE;
                }
                vk::StructureType::PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES => {
                    (*next.cast::<vk::PhysicalDeviceTimelineSemaphoreFeatures>())
                        .timeline_semaphore = vk::FALSE;
                }
                _ => {}
            }
            next = (*next).p_next;
        }
    }
}

/// The hook for an instance-level command `name`, when a shape is chosen (or only the
/// device type, then only the properties).
pub fn lookup(name: &CStr) -> vk::PFN_vkVoidFunction {
    if perf_query::enabled() {
        match name.to_bytes() {
            b"vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR" => {
                return hook!(perf_query::enumerate_counters)
            }
            b"vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR" => {
                return hook!(perf_query::passes)
            }
            b"vkEnumerateDeviceExtensionProperties" => {
                return hook!(enumerate_device_extension_properties)
            }
            _ => {}
        }
    }
    if crate::perf_inherited::enabled() {
        match name.to_bytes() {
            b"vkGetPhysicalDeviceFeatures2" | b"vkGetPhysicalDeviceFeatures2KHR" => {
                return hook!(get_physical_device_features2)
            }
            b"vkGetPhysicalDeviceFeatures" => {
                return hook!(crate::perf_inherited::get_physical_device_features)
            }
            _ => {}
        }
    }
    if shape().is_none() && !gpu_type_only() {
        return None;
    }
    match name.to_bytes() {
        b"vkGetPhysicalDeviceProperties" => hook!(get_physical_device_properties),
        b"vkGetPhysicalDeviceProperties2" | b"vkGetPhysicalDeviceProperties2KHR" => {
            hook!(get_physical_device_properties2)
        }
        _ if shape().is_none() => None,
        b"vkGetPhysicalDeviceQueueFamilyProperties" => {
            hook!(get_physical_device_queue_family_properties)
        }
        b"vkGetPhysicalDeviceQueueFamilyProperties2"
        | b"vkGetPhysicalDeviceQueueFamilyProperties2KHR" => {
            hook!(get_physical_device_queue_family_properties2)
        }
        b"vkEnumerateDeviceExtensionProperties" => hook!(enumerate_device_extension_properties),
        b"vkGetPhysicalDeviceSurfaceSupportKHR" => hook!(get_physical_device_surface_support),
        b"vkGetPhysicalDeviceFeatures2" | b"vkGetPhysicalDeviceFeatures2KHR" => {
            hook!(get_physical_device_features2)
        }
        _ => None,
    }
}
