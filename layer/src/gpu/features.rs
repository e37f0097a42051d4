//! What the layer asks of a device at `vkCreateDevice`: timeline semaphores, to learn when a
//! batch completed without a fence per submission; host query reset, so that a one-time
//! command buffer's queries are reset before it is recorded and its submission needs no
//! command buffer of the layer's; and (for Perfetto) calibrated timestamps, to pair the GPU
//! clock with the CPU's. The application's `VkDeviceCreateInfo` is never modified: where
//! the layer needs more, it builds a copy that prepends structures to the application's
//! chain and, for Vulkan 1.0/1.1 devices, adds `VK_KHR_timeline_semaphore` and
//! `VK_EXT_host_query_reset` to the extension list.
//!
//! When the application's chain already holds a structure that controls a feature
//! (`VkPhysicalDeviceVulkan12Features`, or the feature's own structure) the layer keeps the
//! application's choice: without timeline semaphores it uses fences, without host query
//! reset it re-arms every submission's queries on the GPU.

use std::ffi::{c_char, CStr};

use ash::vk;

use super::chain_copy::CopiedPrefix;
use super::completion::CompletionMode;
use super::core_features::{self, plan_statistics, CorePatch, StatisticsFeatures};
use super::feature_choice::{
    app_choice, device_has_extension, has_device_and_monotonic_domains, supported, AppChoice,
    Feature, CALIBRATION_EXTS,
};
use super::mesh_statistics::{self, MeshQueries};
use super::perf_counters::{self, PerfPlan};
use crate::loader::dispatch::InstanceDispatch;

/// The create info the layer passes down, and how it will learn of completion.
pub struct DevicePlan {
    pub mode: CompletionMode,
    /// `hostQueryReset` is enabled (by the application or the layer).
    pub host_reset: bool,
    /// `VK_KHR/EXT_calibrated_timestamps` is enabled (by the application or the layer).
    pub calibrated: bool,
    /// The pipeline statistics features the device has (asked for with GPU counters only).
    pub statistics: StatisticsFeatures,
    /// The hardware counters asked for (`GPU_TRACE_COUNTERS=perf:...`): resolved, or why not.
    pub perf: PerfPlan,
    /// `Some` when the layer changed the create info.
    patched: Option<Box<Patched>>,
}

struct Patched {
    base: vk::DeviceCreateInfo<'static>,
    /// Prepended to the application's chain when the layer enables timeline semaphores.
    timeline: Option<vk::PhysicalDeviceTimelineSemaphoreFeatures<'static>>,
    /// Prepended (before `timeline`) when the layer enables host query reset.
    host_reset: Option<vk::PhysicalDeviceHostQueryResetFeatures<'static>>,
    /// Prepended (first) when the layer enables performance counter query pools.
    perf: Option<vk::PhysicalDevicePerformanceQueryFeaturesKHR<'static>>,
    /// The application's chain, or the layer's copy of its first structures (up to its
    /// `VkPhysicalDeviceVulkan12Features`, with the layer's features set) linked on to it.
    app_next: *const std::ffi::c_void,
    /// Owns the copies `app_next` may point into.
    _copied: Option<CopiedPrefix>,
    /// The 1.0 features passed as `pEnabledFeatures` when the layer adds to them.
    enabled_features: Option<vk::PhysicalDeviceFeatures>,
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
                // Linked here, once the boxed copy no longer moves.
                let mut next = p.app_next;
                if let Some(timeline) = p.timeline.as_mut() {
                    timeline.p_next = next.cast_mut();
                    next = (timeline as *const vk::PhysicalDeviceTimelineSemaphoreFeatures).cast();
                }
                if let Some(host_reset) = p.host_reset.as_mut() {
                    host_reset.p_next = next.cast_mut();
                    next = (host_reset as *const vk::PhysicalDeviceHostQueryResetFeatures).cast();
                }
                if let Some(perf) = p.perf.as_mut() {
                    perf.p_next = next.cast_mut();
                    next = (perf as *const vk::PhysicalDevicePerformanceQueryFeaturesKHR).cast();
                }
                p.base.p_next = next;
                if let Some(features) = p.enabled_features.as_ref() {
                    p.base.p_enabled_features = features;
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
            host_reset: false,
            calibrated: false,
            statistics: StatisticsFeatures::default(),
            perf: PerfPlan::NotAsked,
            patched: None,
        }
    }
}

/// What the configuration asks of a device.
#[derive(Clone, Debug, Default)]
pub struct Wants {
    /// Learn of completion through fences even where timeline semaphores exist.
    pub force_fence: bool,
    /// Calibrated timestamps (the clock pairing every output uses).
    pub calibration: bool,
    /// The pipeline statistics features (GPU counters).
    pub statistics: bool,
    /// Hardware counters by name (`perf:NAME,...`).
    pub perf: Option<std::sync::Arc<[String]>>,
}

/// What the layer asks for beyond the application's create info: timeline semaphores
/// (unless `wants.force_fence`), calibrated timestamps and the pipeline statistics
/// features when `wants` says so.
///
/// # Safety
/// `create_info` is the application's valid `VkDeviceCreateInfo` for `physical_device`.
pub unsafe fn plan(
    instance: &InstanceDispatch,
    instance_api: u32,
    physical_device: vk::PhysicalDevice,
    device_api: u32,
    create_info: &vk::DeviceCreateInfo<'_>,
    wants: Wants,
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

    let core = instance_api.min(device_api) >= vk::API_VERSION_1_2;
    // Features the application left off in its Vulkan 1.2 structure, set in a copy of it.
    let mut set_in_12: Vec<Feature> = Vec::new();
    // Whether the layer gets `feature`, and whether it has to chain the feature's structure.
    let mut decide = |feature: Feature, allowed: bool| -> (bool, bool) {
        // SAFETY: the application's chain is valid for the duration of vkCreateDevice.
        let choice = unsafe { app_choice(create_info, feature) };
        if !allowed || choice == AppChoice::Disabled {
            return (false, false);
        }
        if choice == AppChoice::Enabled {
            return (true, false);
        }
        // SAFETY: queries on a live physical device.
        if !unsafe { supported(instance, physical_device, core, feature) } {
            return (false, false);
        }
        if choice == AppChoice::DisabledIn12 {
            set_in_12.push(feature);
            return (true, false);
        }
        if !core && !app_has(feature.extension()) {
            extensions.push(feature.extension().as_ptr());
        }
        (true, true)
    };
    let (mut timeline_on, ask_timeline) = decide(Feature::TimelineSemaphore, !wants.force_fence);
    // Host reset serves the timeline path only (a fence-mode batch re-arms on the GPU).
    let (mut host_reset, ask_host_reset) = decide(Feature::HostQueryReset, timeline_on);
    let (mut statistics, mut core_patch) = if wants.statistics || wants.perf.is_some() {
        // SAFETY: the application's create info is valid for the duration of vkCreateDevice.
        unsafe { plan_statistics(instance, physical_device, create_info, wants.statistics) }
    } else {
        (StatisticsFeatures::default(), CorePatch::None)
    };
    let mut set_mesh = false;
    if statistics.query {
        // SAFETY: as above.
        (statistics.mesh, set_mesh) =
            unsafe { mesh_statistics::plan(instance, physical_device, create_info) };
    }
    let in_features2 = matches!(core_patch, CorePatch::InFeatures2).then_some(statistics);
    let copy = (set_in_12.clone(), in_features2, set_mesh);
    // SAFETY: the application's chain is valid for the duration of vkCreateDevice.
    let copied = (!set_in_12.is_empty() || in_features2.is_some() || set_mesh)
        .then(|| unsafe { copy_with_features(create_info, copy) })
        .flatten();
    if copied.is_none() {
        // The application's structures could not be copied: its choice stands.
        timeline_on &= !set_in_12.contains(&Feature::TimelineSemaphore);
        host_reset &= timeline_on && !set_in_12.contains(&Feature::HostQueryReset);
        if in_features2.is_some() {
            statistics = StatisticsFeatures {
                uncopied: true,
                ..StatisticsFeatures::default()
            };
            core_patch = CorePatch::None;
        }
        if set_mesh {
            statistics.mesh = MeshQueries::NotOffered;
        }
    }
    let enabled_features = match core_patch {
        CorePatch::Pointer(features) => Some(*features),
        _ => None,
    };
    let mode = if timeline_on {
        CompletionMode::Timeline
    } else {
        CompletionMode::Fence
    };
    let timeline = ask_timeline
        .then(|| vk::PhysicalDeviceTimelineSemaphoreFeatures::default().timeline_semaphore(true));
    let host_reset_features = (ask_host_reset && host_reset)
        .then(|| vk::PhysicalDeviceHostQueryResetFeatures::default().host_query_reset(true));

    // Calibrated timestamps.
    let mut calibrated = false;
    if wants.calibration {
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

    // Hardware counters: the extension and its query pools, where they resolve.
    let mut perf = match &wants.perf {
        // SAFETY: the application's create info is valid during this call.
        Some(names) => unsafe {
            perf_counters::plan(instance, physical_device, create_info, names)
        },
        None => PerfPlan::NotAsked,
    };
    if matches!(perf, PerfPlan::Chosen { .. }) {
        if !statistics.inherited {
            perf = PerfPlan::Refused(if statistics.uncopied {
                "inheritedQueries could not be enabled (the application's feature structures hold one the layer cannot copy)".into()
            } else {
                "the device has no inheritedQueries, without which a counted command buffer may not execute secondaries".into()
            });
        } else if !host_reset {
            perf = PerfPlan::Refused(
                "the layer resets its queries on the host only with timeline semaphores and hostQueryReset, which this device is not given (UTRACE_FORCE_FENCE=1, or the device lacks them)".into(),
            );
        }
    }
    let mut perf_features = None;
    if matches!(perf, PerfPlan::Chosen { .. }) {
        // SAFETY: as above.
        match unsafe { perf_counters::app_pools(create_info) } {
            Some(true) => {}
            Some(false) => {
                perf = PerfPlan::Refused(
                    "the application turned performanceCounterQueryPools off".into(),
                )
            }
            None => {
                perf_features = Some(
                    vk::PhysicalDevicePerformanceQueryFeaturesKHR::default()
                        .performance_counter_query_pools(true),
                )
            }
        }
        if matches!(perf, PerfPlan::Chosen { .. }) && !app_has(perf_counters::EXTENSION) {
            extensions.push(perf_counters::EXTENSION.as_ptr());
        }
    }

    if timeline.is_none()
        && host_reset_features.is_none()
        && perf_features.is_none()
        && copied.is_none()
        && enabled_features.is_none()
        && extensions.len() == app_count
    {
        return DevicePlan {
            mode,
            host_reset,
            calibrated,
            statistics,
            perf,
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
        host_reset,
        calibrated,
        statistics,
        perf,
        patched: Some(Box::new(Patched {
            base,
            timeline,
            host_reset: host_reset_features,
            perf: perf_features,
            app_next: copied
                .as_ref()
                .map_or(create_info.p_next, CopiedPrefix::head),
            _copied: copied,
            enabled_features,
            extensions,
        })),
    }
}

/// A copy of the application's chain up to its `VkPhysicalDeviceVulkan12Features` (with
/// `in_12` set there), with `in_features2` its `VkPhysicalDeviceFeatures2` (with those
/// statistics features set there) and with `mesh` its
/// `VkPhysicalDeviceMeshShaderFeaturesEXT` (`meshShaderQueries` set there).
///
/// # Safety
/// `create_info`'s chain must be valid.
unsafe fn copy_with_features(
    create_info: &vk::DeviceCreateInfo<'_>,
    (in_12, in_features2, mesh): (Vec<Feature>, Option<StatisticsFeatures>, bool),
) -> Option<CopiedPrefix> {
    use vk::StructureType as S;
    let mut targets = Vec::new();
    if !in_12.is_empty() {
        targets.push(S::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    }
    if in_features2.is_some() {
        targets.push(S::PHYSICAL_DEVICE_FEATURES_2);
    }
    if mesh {
        targets.push(S::PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT);
    }
    // SAFETY: forwarded from the caller.
    let mut prefix = unsafe { CopiedPrefix::through(create_info.p_next, &targets) };
    let Some(copy) = prefix.as_mut() else {
        log::info!("the application's device features chain holds a structure the layer does not know before the features it sets; they are not enabled");
        return None;
    };
    if !in_12.is_empty() {
        // SAFETY: the structure type names a Vulkan 1.2 features structure.
        let v12 = unsafe {
            copy.find_mut::<vk::PhysicalDeviceVulkan12Features>(
                S::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
            )
        }?;
        for feature in &in_12 {
            match feature {
                Feature::TimelineSemaphore => v12.timeline_semaphore = vk::TRUE,
                Feature::HostQueryReset => v12.host_query_reset = vk::TRUE,
            }
        }
    }
    if let Some(have) = in_features2 {
        // SAFETY: the structure type names a VkPhysicalDeviceFeatures2.
        let f2 =
            unsafe { copy.find_mut::<vk::PhysicalDeviceFeatures2>(S::PHYSICAL_DEVICE_FEATURES_2) }?;
        core_features::set(&mut f2.features, have);
    }
    if mesh {
        // SAFETY: the structure type names a VkPhysicalDeviceMeshShaderFeaturesEXT.
        let m = unsafe {
            copy.find_mut::<vk::PhysicalDeviceMeshShaderFeaturesEXT>(
                S::PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT,
            )
        }?;
        m.mesh_shader_queries = vk::TRUE;
    }
    prefix
}
