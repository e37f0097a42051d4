//! What `utrace counters` asks of Vulkan: an instance of its own (no layer asked for;
//! `VK_INSTANCE_LAYERS` and the loader's variables apply as to any application), each
//! physical device, whether it has VK_KHR_performance_query, and each queue family's
//! counters with the passes each needs alone and all of a family's together.

use std::ffi::CStr;

use ash::vk;

/// One counter of a queue family.
#[derive(Clone, Debug, PartialEq)]
pub struct Counter {
    pub name: String,
    pub category: String,
    pub description: String,
    pub unit: vk::PerformanceCounterUnitKHR,
    pub scope: vk::PerformanceCounterScopeKHR,
    pub storage: vk::PerformanceCounterStorageKHR,
    /// Passes it needs alone (one unless the driver says more).
    pub passes: u32,
}

/// A queue family and its counters.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    pub index: u32,
    pub flags: vk::QueueFlags,
    pub counters: Vec<Counter>,
    /// Passes all its counters together need.
    pub passes_all: u32,
}

/// A physical device: its name, and its families' counters (`None` without the extension).
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub name: String,
    pub families: Option<Vec<Family>>,
}

/// Every physical device's counters.
pub fn devices() -> Result<Vec<Device>, String> {
    // SAFETY: loads the system's Vulkan loader (libvulkan.so.1), as any application does.
    let entry = unsafe { ash::Entry::load() }
        .map_err(|e| format!("cannot load the Vulkan loader (libvulkan.so.1): {e}"))?;
    let app = vk::ApplicationInfo::default()
        .application_name(c"utrace counters")
        .api_version(vk::API_VERSION_1_1);
    let info = vk::InstanceCreateInfo::default().application_info(&app);
    // SAFETY: a valid create info; the instance is destroyed below.
    let instance = unsafe { entry.create_instance(&info, None) }
        .map_err(|e| format!("cannot create a Vulkan instance: {e}"))?;
    // SAFETY: a live instance, destroyed once its devices were read.
    let found = unsafe { read_devices(&entry, &instance) };
    // SAFETY: nothing made from the instance outlives it.
    unsafe { instance.destroy_instance(None) };
    found
}

/// # Safety
/// `instance` is live.
unsafe fn read_devices(
    entry: &ash::Entry,
    instance: &ash::Instance,
) -> Result<Vec<Device>, String> {
    let perf = ash::khr::performance_query::Instance::new(entry, instance);
    // SAFETY: a live instance.
    let physicals = unsafe { instance.enumerate_physical_devices() }
        .map_err(|e| format!("cannot list the Vulkan devices: {e}"))?;
    let mut devices = Vec::new();
    for physical in physicals {
        // SAFETY: a physical device of this instance.
        let props = unsafe { instance.get_physical_device_properties(physical) };
        let mut name = props
            .device_name_as_c_str()
            .map_or_else(|_| "?".into(), |n| n.to_string_lossy().into_owned());
        // The driver and its version, which tell two devices of one name apart (Lavapipe
        // 22.3 and 25.0 both say llvmpipe).
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
        // SAFETY: a physical device of this Vulkan 1.1 instance; a chain of known structures.
        unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
        if let (Ok(n), Ok(info)) = (driver.driver_name_as_c_str(), driver.driver_info_as_c_str()) {
            if !n.is_empty() {
                name = format!("{name}, {} {}", n.to_string_lossy(), info.to_string_lossy());
            }
        }
        // SAFETY: as above.
        let has = unsafe { instance.enumerate_device_extension_properties(physical) }
            .unwrap_or_default()
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(ash::khr::performance_query::NAME));
        let families = if has {
            // SAFETY: a physical device of this instance that has the extension.
            Some(unsafe { families(instance, &perf, physical) }?)
        } else {
            None
        };
        devices.push(Device { name, families });
    }
    Ok(devices)
}

/// # Safety
/// `physical` belongs to `instance` and has VK_KHR_performance_query.
unsafe fn families(
    instance: &ash::Instance,
    perf: &ash::khr::performance_query::Instance,
    physical: vk::PhysicalDevice,
) -> Result<Vec<Family>, String> {
    // SAFETY: the caller's promise.
    let props = unsafe { instance.get_physical_device_queue_family_properties(physical) };
    let mut families = Vec::new();
    for (index, p) in props.iter().enumerate() {
        let index = index as u32;
        // SAFETY: the caller's promise; the two-call idiom through ash.
        let len = unsafe {
            perf.enumerate_physical_device_queue_family_performance_query_counters_len(
                physical, index,
            )
        }
        .map_err(|e| format!("cannot list queue family {index}'s counters: {e}"))?;
        let mut counters = vec![vk::PerformanceCounterKHR::default(); len];
        let mut descriptions = vec![vk::PerformanceCounterDescriptionKHR::default(); len];
        // SAFETY: as above, both arrays of the length asked for.
        unsafe {
            perf.enumerate_physical_device_queue_family_performance_query_counters(
                physical,
                index,
                &mut counters,
                &mut descriptions,
            )
        }
        .map_err(|e| format!("cannot list queue family {index}'s counters: {e}"))?;
        let passes = |indices: &[u32]| {
            let info = vk::QueryPoolPerformanceCreateInfoKHR::default()
                .queue_family_index(index)
                .counter_indices(indices);
            // SAFETY: the caller's promise; indices of the counters just listed.
            unsafe {
                perf.get_physical_device_queue_family_performance_query_passes(physical, &info)
            }
        };
        let text = |s: &[std::ffi::c_char]| {
            // SAFETY: the driver's NUL-terminated fixed-size strings.
            unsafe { CStr::from_ptr(s.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        };
        let list: Vec<Counter> = counters
            .iter()
            .zip(&descriptions)
            .enumerate()
            .map(|(i, (c, d))| Counter {
                name: text(&d.name),
                category: text(&d.category),
                description: text(&d.description),
                unit: c.unit,
                scope: c.scope,
                storage: c.storage,
                passes: passes(&[i as u32]),
            })
            .collect();
        let all: Vec<u32> = (0..list.len() as u32).collect();
        families.push(Family {
            index,
            flags: p.queue_flags,
            passes_all: if all.is_empty() { 0 } else { passes(&all) },
            counters: list,
        });
    }
    Ok(families)
}
