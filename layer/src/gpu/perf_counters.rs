//! Hardware counters (`GPU_TRACE_COUNTERS=perf:NAME,...`, VK_KHR_performance_query), as far
//! as the device's creation: the names resolved against the counters of each queue family
//! the application asks queues of, the set refused when it is not there or needs more than
//! one pass (the layer collects one), the extension and `performanceCounterQueryPools`
//! enabled in the layer's copy of the create info, and once the device is made the
//! profiling lock taken, held until `vkDestroyDevice`. Their queries are `perf_queries`'.

use std::ffi::CStr;

use ash::vk;

use crate::loader::dispatch::InstanceDispatch;

pub const EXTENSION: &CStr = ash::khr::performance_query::NAME;

/// What the layer does with the hardware counters asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PerfPlan {
    /// None asked for.
    #[default]
    NotAsked,
    /// Asked for, not collected: why.
    Refused(String),
    /// Per queue family with the counters: the counters' indices in the driver's list, in
    /// the order asked, and their names as the driver gives them.
    Chosen {
        families: Vec<(u32, Vec<u32>)>,
        names: Vec<String>,
        /// How each counter's value is stored, in the order asked.
        storage: Vec<vk::PerformanceCounterStorageKHR>,
        /// Each counter's unit, in the order asked.
        units: Vec<vk::PerformanceCounterUnitKHR>,
        /// Whether any counter is of command-buffer scope: then a query spans a whole
        /// command buffer (its first command to its last), else each render pass.
        command_buffer_scope: bool,
    },
}

/// One queue family's counters, as the driver lists them: (name, the counter).
type Listed = Vec<(String, vk::PerformanceCounterKHR<'static>)>;

/// Resolves `asked` on `physical_device` for the families `create_info` asks queues of.
///
/// # Safety
/// `create_info` is the application's valid `VkDeviceCreateInfo` for `physical_device`, a
/// physical device of `instance`.
pub(super) unsafe fn plan(
    instance: &InstanceDispatch,
    physical_device: vk::PhysicalDevice,
    create_info: &vk::DeviceCreateInfo<'_>,
    asked: &[String],
) -> PerfPlan {
    // An application that profiles itself holds the profiling lock: the layer stays out
    // of its way.
    // SAFETY: the application's extension names, of the length the info says.
    let names = unsafe {
        crate::ffi::slice(
            create_info.pp_enabled_extension_names,
            create_info.enabled_extension_count,
        )
    };
    let is_ours = |&n: &*const std::ffi::c_char| {
        // SAFETY: the application's NUL-terminated extension names.
        let name = unsafe { CStr::from_ptr(n) };
        name == EXTENSION
    };
    if names.iter().any(is_ours) {
        return PerfPlan::Refused(
            "the application uses VK_KHR_performance_query itself (the profiling lock is its own)"
                .into(),
        );
    }
    // SAFETY: the caller's promises.
    let has = unsafe {
        super::feature_choice::device_has_extension(instance, physical_device, EXTENSION)
    };
    if !has {
        return PerfPlan::Refused("the driver has no VK_KHR_performance_query".into());
    }
    // SAFETY: as above.
    if !unsafe { pools_offered(instance, physical_device) } {
        return PerfPlan::Refused("the device offers no performanceCounterQueryPools".into());
    }
    let gipa = |name: &CStr| {
        // SAFETY: the next layer's GIPA with the live instance.
        unsafe { (instance.get_instance_proc_addr)(instance.handle, name.as_ptr()) }
    };
    let (Some(list), Some(passes)) = (
        gipa(c"vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR"),
        gipa(c"vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR"),
    ) else {
        return PerfPlan::Refused(
            "the instance does not resolve VK_KHR_performance_query's commands".into(),
        );
    };
    // SAFETY: the commands of these names have these signatures.
    let (list, passes) = unsafe {
        (
            std::mem::transmute::<
                unsafe extern "system" fn(),
                vk::PFN_vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR,
            >(list),
            std::mem::transmute::<
                unsafe extern "system" fn(),
                vk::PFN_vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR,
            >(passes),
        )
    };
    let queues = if create_info.p_queue_create_infos.is_null() {
        &[][..]
    } else {
        // SAFETY: the application's array of this length.
        unsafe {
            std::slice::from_raw_parts(
                create_info.p_queue_create_infos,
                create_info.queue_create_info_count as usize,
            )
        }
    };
    let mut families = Vec::new();
    let mut names = Vec::new();
    let mut storage = Vec::new();
    let mut units = Vec::new();
    let mut command_buffer_scope = false;
    for q in queues {
        let family = q.queue_family_index;
        // SAFETY: a physical device of the instance and a family it has.
        let listed = unsafe { counters_of(list, physical_device, family) };
        if listed.is_empty() {
            continue;
        }
        let find = |want: &String| {
            listed
                .iter()
                .position(|(n, _)| n.eq_ignore_ascii_case(want))
        };
        let missing: Vec<String> = asked
            .iter()
            .filter(|w| find(w).is_none())
            .map(|w| format!("{w:?}"))
            .collect();
        if !missing.is_empty() {
            let all: Vec<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
            return PerfPlan::Refused(format!(
                "queue family {family} has no counter {} (it has: {}; `utrace counters` lists them)",
                missing.join(", "),
                all.join(", ")
            ));
        }
        let indices: Vec<u32> = asked.iter().filter_map(find).map(|i| i as u32).collect();
        let driver_names: Vec<&str> = indices
            .iter()
            .map(|&i| listed[i as usize].0.as_str())
            .collect();
        let info = vk::QueryPoolPerformanceCreateInfoKHR::default()
            .queue_family_index(family)
            .counter_indices(&indices);
        let mut n = 0u32;
        // SAFETY: a physical device of the instance, a valid info of its counters.
        unsafe { passes(physical_device, &info, &mut n) };
        if n > 1 {
            return PerfPlan::Refused(format!(
                "the counters {} need {n} passes on queue family {family}; utrace collects counters in one pass (ask for fewer)",
                driver_names.join(", ")
            ));
        }
        if names.is_empty() {
            names = driver_names.iter().map(|n| n.to_string()).collect();
            storage = indices
                .iter()
                .map(|&i| listed[i as usize].1.storage)
                .collect();
            units = indices.iter().map(|&i| listed[i as usize].1.unit).collect();
        }
        command_buffer_scope |= indices
            .iter()
            .any(|&i| listed[i as usize].1.scope == vk::PerformanceCounterScopeKHR::COMMAND_BUFFER);
        families.push((family, indices));
    }
    if families.is_empty() {
        return PerfPlan::Refused("no queue family the application uses has counters".into());
    }
    PerfPlan::Chosen {
        families,
        names,
        storage,
        units,
        command_buffer_scope,
    }
}

/// Whether each of `family`'s counters is of command-buffer scope (their queries must be a
/// command buffer's first and last commands), for an application that enabled
/// VK_KHR_performance_query; empty where the instance does not resolve its commands.
///
/// # Safety
/// `physical` is a physical device of `instance`, with `family`.
pub unsafe fn command_buffer_scopes(
    instance: &InstanceDispatch,
    physical: vk::PhysicalDevice,
    family: u32,
) -> Vec<bool> {
    let name = c"vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR";
    // SAFETY: the next layer's GIPA with the live instance.
    let Some(list) = (unsafe { (instance.get_instance_proc_addr)(instance.handle, name.as_ptr()) })
    else {
        return Vec::new();
    };
    // SAFETY: the command of this name has this signature.
    let list = unsafe {
        std::mem::transmute::<
            unsafe extern "system" fn(),
            vk::PFN_vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR,
        >(list)
    };
    // SAFETY: the caller's promises.
    unsafe { counters_of(list, physical, family) }
        .iter()
        .map(|(_, c)| c.scope == vk::PerformanceCounterScopeKHR::COMMAND_BUFFER)
        .collect()
}

/// # Safety
/// `physical` is a physical device of the instance `list` came from, with `family`.
unsafe fn counters_of(
    list: vk::PFN_vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR,
    physical: vk::PhysicalDevice,
    family: u32,
) -> Listed {
    let mut count = 0u32;
    let (no_counters, no_descriptions) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: the two-call idiom (the caller's promises).
    let r = unsafe { list(physical, family, &mut count, no_counters, no_descriptions) };
    if r != vk::Result::SUCCESS {
        return Vec::new();
    }
    let mut counters = vec![vk::PerformanceCounterKHR::default(); count as usize];
    let mut descriptions = vec![vk::PerformanceCounterDescriptionKHR::default(); count as usize];
    let (c, d) = (counters.as_mut_ptr(), descriptions.as_mut_ptr());
    // SAFETY: arrays of `count` elements, their sTypes set by `default`.
    if unsafe { list(physical, family, &mut count, c, d) } != vk::Result::SUCCESS {
        return Vec::new();
    }
    descriptions
        .iter()
        .zip(counters)
        .take(count as usize)
        .map(|(d, c)| {
            let name = d
                .name_as_c_str()
                .map_or_else(|_| String::new(), |n| n.to_string_lossy().into_owned());
            (name, c)
        })
        .collect()
}

/// # Safety
/// `physical` is a physical device of `instance`.
unsafe fn pools_offered(instance: &InstanceDispatch, physical: vk::PhysicalDevice) -> bool {
    let Some(features2) = instance.get_physical_device_features2 else {
        return false;
    };
    let mut perf = vk::PhysicalDevicePerformanceQueryFeaturesKHR::default();
    let mut all = vk::PhysicalDeviceFeatures2::default().push_next(&mut perf);
    // SAFETY: the caller's promise; an output chain of known structures.
    unsafe { features2(physical, &mut all) };
    perf.performance_counter_query_pools == vk::TRUE
}

/// The application's own `performanceCounterQueryPools`, if its chain names it.
///
/// # Safety
/// `create_info`'s chain must be valid.
pub(super) unsafe fn app_pools(create_info: &vk::DeviceCreateInfo<'_>) -> Option<bool> {
    let mut next = create_info.p_next.cast::<vk::BaseInStructure>();
    while !next.is_null() {
        // SAFETY: every element of a valid chain starts with sType/pNext, and the structure
        // is read as the type its sType names.
        unsafe {
            if (*next).s_type == vk::StructureType::PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR {
                let f = &*next.cast::<vk::PhysicalDevicePerformanceQueryFeaturesKHR>();
                return Some(f.performance_counter_query_pools == vk::TRUE);
            }
            next = (*next).p_next;
        }
    }
    None
}

/// The device's line about them, said when it is created.
pub fn said(index: u32, plan: &PerfPlan, lock: Result<(), vk::Result>) -> Option<String> {
    match plan {
        PerfPlan::NotAsked => None,
        PerfPlan::Refused(why) => Some(format!(
            "device {index}: GPU counters (VK_KHR_performance_query): {why}; no hardware counters"
        )),
        PerfPlan::Chosen {
            names,
            command_buffer_scope,
            ..
        } => Some(match lock {
            Ok(()) => format!(
                "device {index}: GPU counters (VK_KHR_performance_query): {} in one pass, the profiling lock taken; counted around each {} of primary command buffers, not those for simultaneous use",
                names.join(", "),
                if *command_buffer_scope {
                    "command buffer (a counter is of command-buffer scope)"
                } else {
                    "render pass instance (the first 32 of a command buffer, none that suspends)"
                }
            ),
            Err(vk::Result::TIMEOUT) => format!(
                "device {index}: GPU counters (VK_KHR_performance_query): {}: the profiling lock is held elsewhere (another process profiling the device; waited 1 s); no hardware counters",
                names.join(", ")
            ),
            Err(e) => format!(
                "device {index}: GPU counters (VK_KHR_performance_query): {}: the profiling lock could not be taken ({e:?}); no hardware counters",
                names.join(", ")
            ),
        }),
    }
}

/// The device's profiling lock (`vkAcquireProfilingLockKHR`), which command buffers with
/// performance queries need while they are recorded and run; taken when the device is
/// made, given back at `vkDestroyDevice` ([`ProfilingLock::release`]).
pub struct ProfilingLock {
    release: vk::PFN_vkReleaseProfilingLockKHR,
}

impl ProfilingLock {
    /// Takes the lock of `dispatch`'s device, waiting for it at most a second (another
    /// process profiling the device holds it).
    pub fn acquire(dispatch: &crate::loader::dispatch::DeviceDispatch) -> Result<Self, vk::Result> {
        let resolve = |name: &CStr| {
            // SAFETY: the next layer's GDPA with the live device.
            unsafe { (dispatch.get_device_proc_addr)(dispatch.handle, name.as_ptr()) }
        };
        let (Some(acquire), Some(release)) = (
            resolve(c"vkAcquireProfilingLockKHR"),
            resolve(c"vkReleaseProfilingLockKHR"),
        ) else {
            return Err(vk::Result::ERROR_EXTENSION_NOT_PRESENT);
        };
        // SAFETY: the commands of these names have these signatures.
        let (acquire, release) = unsafe {
            (
                std::mem::transmute::<unsafe extern "system" fn(), vk::PFN_vkAcquireProfilingLockKHR>(
                    acquire,
                ),
                std::mem::transmute::<unsafe extern "system" fn(), vk::PFN_vkReleaseProfilingLockKHR>(
                    release,
                ),
            )
        };
        let info = vk::AcquireProfilingLockInfoKHR::default().timeout(1_000_000_000);
        // SAFETY: a live device with VK_KHR_performance_query enabled; a valid info.
        match unsafe { acquire(dispatch.handle, &info) } {
            vk::Result::SUCCESS => Ok(ProfilingLock { release }),
            e => Err(e),
        }
    }

    /// Gives the lock back, before the device is destroyed.
    pub fn release(self, device: vk::Device) {
        // SAFETY: the lock was taken on this live device.
        unsafe { (self.release)(device) };
    }
}
