//! `UTRACE_PERF_QUERY=1`: VK_KHR_performance_query as a driver with hardware counters
//! offers it (radv, anv, turnip, NVIDIA), on Lavapipe, which has none. So far what a tool
//! asks before recording anything: the device extension, its `performanceCounterQueryPools`
//! feature, and each queue family's counters (five, with known units, scopes and storage;
//! the last needs a pass of its own, so a set of it and any other needs two); and the
//! device's side as far as its profiling lock: `vkCreateDevice` passes down neither the
//! extension nor the feature's structure, and the lock is this layer's (held by another
//! process with `UTRACE_PERF_LOCK_HELD=1`: every acquire times out).
//!
//! Families with graphics or compute list the counters; others none.

use std::ffi::{c_char, CStr};

use ash::vk;

/// The extension's name and version, as the layer advertises it.
pub const EXTENSION: &CStr = c"VK_KHR_performance_query";
const SPEC_VERSION: u32 = 1;

/// Whether the emulation is on.
pub fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("UTRACE_PERF_QUERY").as_deref() == Ok("1"))
}

/// One emulated counter.
struct Counter {
    name: &'static str,
    category: &'static str,
    description: &'static str,
    unit: vk::PerformanceCounterUnitKHR,
    scope: vk::PerformanceCounterScopeKHR,
    storage: vk::PerformanceCounterStorageKHR,
    /// The pass that collects it: counters of different passes need as many passes.
    pass: u32,
}

const COUNTERS: [Counter; 5] = [
    Counter {
        name: "Draws",
        category: "Work",
        description: "Draw commands executed (emulated: counted where recorded)",
        unit: vk::PerformanceCounterUnitKHR::GENERIC,
        scope: vk::PerformanceCounterScopeKHR::RENDER_PASS,
        storage: vk::PerformanceCounterStorageKHR::UINT64,
        pass: 0,
    },
    Counter {
        name: "Vertices",
        category: "Work",
        description: "Vertices drawn: vertex count times instance count (emulated)",
        unit: vk::PerformanceCounterUnitKHR::GENERIC,
        scope: vk::PerformanceCounterScopeKHR::COMMAND,
        storage: vk::PerformanceCounterStorageKHR::UINT64,
        pass: 0,
    },
    Counter {
        name: "Workgroups",
        category: "Work",
        description: "Compute workgroups dispatched (emulated)",
        unit: vk::PerformanceCounterUnitKHR::GENERIC,
        scope: vk::PerformanceCounterScopeKHR::COMMAND_BUFFER,
        storage: vk::PerformanceCounterStorageKHR::UINT64,
        pass: 0,
    },
    Counter {
        name: "GPU busy",
        category: "Utilization",
        description: "Share of the time the GPU was busy (emulated: always 100)",
        unit: vk::PerformanceCounterUnitKHR::PERCENTAGE,
        scope: vk::PerformanceCounterScopeKHR::COMMAND_BUFFER,
        storage: vk::PerformanceCounterStorageKHR::FLOAT64,
        pass: 0,
    },
    Counter {
        name: "L2 misses",
        category: "Memory",
        description: "Cache lines missed (emulated: collected in a pass of its own)",
        unit: vk::PerformanceCounterUnitKHR::GENERIC,
        scope: vk::PerformanceCounterScopeKHR::COMMAND_BUFFER,
        storage: vk::PerformanceCounterStorageKHR::UINT64,
        pass: 1,
    },
];

/// `text` into a fixed C string field (cut to fit, NUL-terminated).
fn fill(field: &mut [c_char], text: &str) {
    field.fill(0);
    let room = field.len() - 1;
    for (f, b) in field.iter_mut().zip(text.bytes().take(room)) {
        *f = b as c_char;
    }
}

/// A counter's UUID: its name's bytes, padded (stable across runs and processes).
fn uuid(name: &str) -> [u8; vk::UUID_SIZE] {
    let mut id = [0u8; vk::UUID_SIZE];
    for (i, b) in name.bytes().enumerate() {
        id[i % vk::UUID_SIZE] ^= b;
    }
    id[0] ^= 0x75;
    id
}

/// Whether `family` (of `physical`) has the counters: graphics or compute. The families
/// are those the application sees (a shape's extra ones too).
fn has_counters(physical: vk::PhysicalDevice, family: u32) -> bool {
    type Pfn = vk::PFN_vkGetPhysicalDeviceQueueFamilyProperties;
    let list = |count: &mut u32, props: *mut vk::QueueFamilyProperties| {
        if crate::shape::shape().is_some() {
            // SAFETY: the two-call idiom's arguments, for the shape's own list.
            unsafe {
                crate::shape::physical::get_physical_device_queue_family_properties(
                    physical, count, props,
                )
            };
        } else {
            let f = c"vkGetPhysicalDeviceQueueFamilyProperties";
            instance_down!(physical, f, Pfn, (physical, count, props));
        }
    };
    let mut count = 0u32;
    list(&mut count, std::ptr::null_mut());
    let mut props = vec![vk::QueueFamilyProperties::default(); count as usize];
    list(&mut count, props.as_mut_ptr());
    props.get(family as usize).is_some_and(|p| {
        p.queue_flags
            .intersects(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)
    })
}

pub unsafe extern "system" fn enumerate_counters(
    physical: vk::PhysicalDevice,
    family: u32,
    count: *mut u32,
    counters: *mut vk::PerformanceCounterKHR<'_>,
    descriptions: *mut vk::PerformanceCounterDescriptionKHR<'_>,
) -> vk::Result {
    let listed: &[Counter] = if has_counters(physical, family) {
        &COUNTERS
    } else {
        &[]
    };
    // SAFETY: the caller's two-call arguments: `count`, and room for `*count` elements in
    // each array that is not null (each element's sType and pNext are the caller's).
    unsafe {
        if counters.is_null() && descriptions.is_null() {
            *count = listed.len() as u32;
            return vk::Result::SUCCESS;
        }
        let room = (*count as usize).min(listed.len());
        for (i, c) in listed.iter().take(room).enumerate() {
            if let Some(out) = counters.add(i).as_mut() {
                out.unit = c.unit;
                out.scope = c.scope;
                out.storage = c.storage;
                out.uuid = uuid(c.name);
            }
            if let Some(out) = descriptions.add(i).as_mut() {
                out.flags = vk::PerformanceCounterDescriptionFlagsKHR::empty();
                fill(&mut out.name, c.name);
                fill(&mut out.category, c.category);
                fill(&mut out.description, c.description);
            }
        }
        *count = room as u32;
        if room < listed.len() {
            vk::Result::INCOMPLETE
        } else {
            vk::Result::SUCCESS
        }
    }
}

pub unsafe extern "system" fn passes(
    _physical: vk::PhysicalDevice,
    info: *const vk::QueryPoolPerformanceCreateInfoKHR<'_>,
    passes: *mut u32,
) {
    // SAFETY: the caller's valid info and its list of counter indices.
    let indices = unsafe {
        let info = &*info;
        if info.p_counter_indices.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(info.p_counter_indices, info.counter_index_count as usize)
        }
    };
    let mut seen = [false; 2];
    for &i in indices {
        if let Some(c) = COUNTERS.get(i as usize) {
            seen[c.pass as usize] = true;
        }
    }
    let n = seen.iter().filter(|s| **s).count().max(1) as u32;
    // SAFETY: the caller's output.
    unsafe { *passes = n };
}

/// The extension, for a device's extension list.
pub fn extension() -> vk::ExtensionProperties {
    let mut e = vk::ExtensionProperties {
        spec_version: SPEC_VERSION,
        ..Default::default()
    };
    let name = EXTENSION.to_bytes();
    for (d, b) in e.extension_name.iter_mut().zip(name) {
        *d = *b as c_char;
    }
    e
}

/// Fills the extension's feature structure where the caller's chain has one.
///
/// # Safety
/// `features` is the caller's valid output chain.
pub unsafe fn fill_features(features: *mut vk::PhysicalDeviceFeatures2<'_>) {
    // SAFETY: each structure read as the type its sType names.
    unsafe {
        let mut next = (*features).p_next.cast::<vk::BaseOutStructure>();
        while !next.is_null() {
            if (*next).s_type == vk::StructureType::PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR {
                let f = &mut *next.cast::<vk::PhysicalDevicePerformanceQueryFeaturesKHR>();
                f.performance_counter_query_pools = vk::TRUE;
                f.performance_counter_multiple_query_pools = vk::FALSE;
            }
            next = (*next).p_next;
        }
    }
}

/// Where [`strip`] unlinked the features structure from the middle of the chain: the
/// structure before it and its `pNext` as it was, put back by [`Unlinked::restore`] once
/// the driver has had the call.
pub struct Unlinked(
    Option<(
        *mut vk::BaseOutStructure<'static>,
        *mut vk::BaseOutStructure<'static>,
    )>,
);

impl Unlinked {
    pub fn restore(self) {
        if let Some((before, next)) = self.0 {
            // SAFETY: the structure `strip` changed, still alive during vkCreateDevice.
            unsafe { (*before).p_next = next };
        }
    }
}

/// Takes the extension out of `info`'s list (`extensions` holds the list passed down) and
/// its features structure out of `info`'s chain: off its head (where utrace prepends it) in
/// `info`, or from its middle (an application's own) by relinking the structure before it
/// for the call's length (a test layer's liberty; see [`Unlinked`]).
///
/// # Safety
/// `info`'s chain is valid; `extensions` is the list `info` names (or will).
pub unsafe fn strip(
    info: &mut vk::DeviceCreateInfo<'_>,
    extensions: &mut Vec<*const c_char>,
) -> Unlinked {
    // SAFETY: the caller's valid extension names.
    extensions.retain(|&e| unsafe { CStr::from_ptr(e) } != EXTENSION);
    info.enabled_extension_count = extensions.len() as u32;
    info.pp_enabled_extension_names = extensions.as_ptr();
    let wanted = vk::StructureType::PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR;
    let head = info
        .p_next
        .cast_mut()
        .cast::<vk::BaseOutStructure<'static>>();
    // SAFETY: a valid chain, walked by sType/pNext.
    unsafe {
        if head.is_null() {
            return Unlinked(None);
        }
        if (*head).s_type == wanted {
            info.p_next = (*head).p_next.cast_const().cast();
            return Unlinked(None);
        }
        let mut before = head;
        while !(*before).p_next.is_null() {
            let next = (*before).p_next;
            if (*next).s_type == wanted {
                (*before).p_next = (*next).p_next;
                return Unlinked(Some((before, next)));
            }
            before = next;
        }
    }
    Unlinked(None)
}

/// Whether the emulated profiling lock is held (by this process).
static LOCKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

unsafe extern "system" fn acquire_profiling_lock(
    _device: vk::Device,
    _info: *const vk::AcquireProfilingLockInfoKHR<'_>,
) -> vk::Result {
    let elsewhere = std::env::var("UTRACE_PERF_LOCK_HELD").as_deref() == Ok("1");
    if elsewhere || LOCKED.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return vk::Result::TIMEOUT;
    }
    eprintln!("utrace-perf: the profiling lock is taken");
    vk::Result::SUCCESS
}

unsafe extern "system" fn release_profiling_lock(_device: vk::Device) {
    if LOCKED.swap(false, std::sync::atomic::Ordering::AcqRel) {
        eprintln!("utrace-perf: the profiling lock is given back");
    }
}

/// The device-level commands the emulation answers itself (the driver has none of them).
pub fn device_lookup(name: &CStr) -> vk::PFN_vkVoidFunction {
    if !enabled() {
        return None;
    }
    match name.to_bytes() {
        b"vkAcquireProfilingLockKHR" => hook!(acquire_profiling_lock),
        b"vkReleaseProfilingLockKHR" => hook!(release_profiling_lock),
        _ => None,
    }
}
