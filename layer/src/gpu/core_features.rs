//! The Vulkan 1.0 features (`VkPhysicalDeviceFeatures`) the layer enables for GPU
//! counters: `pipelineStatisticsQuery` for pipeline statistics (`GPU_TRACE_COUNTERS=
//! pipeline`), without which no such query may be made, and for them and hardware counters
//! (`perf:...`) `inheritedQueries`, without which no query may be active across
//! `vkCmdExecuteCommands`. The application names its 1.0 features in
//! `pEnabledFeatures` or in a `VkPhysicalDeviceFeatures2` of its chain (never both); a
//! feature left off there is only not asked for, so the layer sets it in a copy (or passes
//! a structure of its own when the application gave none). The application's memory is
//! never written.

use ash::vk;

use super::mesh_statistics::MeshQueries;
use crate::loader::dispatch::InstanceDispatch;

/// The statistics features the device will have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatisticsFeatures {
    /// `pipelineStatisticsQuery`.
    pub query: bool,
    /// `inheritedQueries`.
    pub inherited: bool,
    /// `meshShaderQueries` (see `mesh_statistics`).
    pub mesh: MeshQueries,
    /// Not enabled after all: the application's feature structures hold one the layer
    /// cannot copy to set them in.
    pub uncopied: bool,
}

/// How the layer's 1.0 features reach the driver.
#[derive(Debug)]
pub(super) enum CorePatch {
    /// Nothing to change (the application asked for them, or the device lacks them).
    None,
    /// `pEnabledFeatures` pointing at this copy of the application's (or at the layer's
    /// own, when the application passed none and no `VkPhysicalDeviceFeatures2`).
    Pointer(Box<vk::PhysicalDeviceFeatures>),
    /// Set in the layer's copy of the application's `VkPhysicalDeviceFeatures2`.
    InFeatures2,
}

/// What the layer asks for beyond the application's 1.0 features, and what the device will
/// have.
///
/// # Safety
/// `create_info` is the application's valid `VkDeviceCreateInfo` for `physical_device`.
/// `pipeline`: pipeline statistics are asked for (else hardware counters, which need
/// `inheritedQueries` alone).
pub(super) unsafe fn plan_statistics(
    instance: &InstanceDispatch,
    physical_device: vk::PhysicalDevice,
    create_info: &vk::DeviceCreateInfo<'_>,
    pipeline: bool,
) -> (StatisticsFeatures, CorePatch) {
    let mut offered = vk::PhysicalDeviceFeatures::default();
    // SAFETY: a live physical device and an output structure.
    unsafe { (instance.fp_v1_0.get_physical_device_features)(physical_device, &mut offered) };
    // SAFETY: the application's chain is valid (the caller's promise).
    let (app, in_features2) = unsafe { app_features(create_info) };
    decide(&offered, &app, in_features2, pipeline)
}

/// The decision, from what the device offers and what the application asked for (`app`;
/// `in_features2` when it asked in a `VkPhysicalDeviceFeatures2`), for pipeline statistics
/// (`pipeline`) or hardware counters.
fn decide(
    offered: &vk::PhysicalDeviceFeatures,
    app: &vk::PhysicalDeviceFeatures,
    in_features2: bool,
    pipeline: bool,
) -> (StatisticsFeatures, CorePatch) {
    let on = |b: vk::Bool32| b == vk::TRUE;
    let query = pipeline && on(offered.pipeline_statistics_query);
    // Inherited queries serve only a device that makes the layer's queries at all.
    let inherited = (query || !pipeline) && on(offered.inherited_queries);
    let have = StatisticsFeatures {
        query,
        inherited,
        mesh: MeshQueries::NotUsed,
        uncopied: false,
    };
    let missing =
        (query && !on(app.pipeline_statistics_query)) || (inherited && !on(app.inherited_queries));
    if !missing {
        return (have, CorePatch::None);
    }
    if in_features2 {
        return (have, CorePatch::InFeatures2);
    }
    let mut patched = Box::new(*app);
    set(&mut patched, have);
    (have, CorePatch::Pointer(patched))
}

/// What `GPU_TRACE_COUNTERS=pipeline` gets on device `index`, said when it is created.
pub fn said(index: u32, have: StatisticsFeatures) -> String {
    if have.uncopied {
        return format!(
            "device {index}: GPU counters (pipeline statistics): pipelineStatisticsQuery could not be enabled: the application's feature structures hold one the layer cannot copy (UTRACE_LOG=info names it; an application that enables the feature itself is counted); no counters"
        );
    }
    if !have.query {
        return format!(
            "device {index}: GPU counters (pipeline statistics): the device has no pipelineStatisticsQuery; no counters"
        );
    }
    let inherited = if have.inherited {
        "inheritedQueries too"
    } else {
        "no inheritedQueries on this device: no statistics across vkCmdExecuteCommands"
    };
    let mesh = match have.mesh {
        MeshQueries::NotUsed => "",
        MeshQueries::Counted => "; meshShaderQueries enabled: task and mesh shader invocations too",
        MeshQueries::NotOffered => {
            "; the device has no meshShaderQueries: no task or mesh shader invocations"
        }
    };
    format!(
        "device {index}: GPU counters (pipeline statistics): pipelineStatisticsQuery enabled ({inherited}{mesh}); counters on the draws, render passes, dispatches, trace-rays and executed secondaries of primary command buffers (a render pass instance suspended across command buffers: each part)"
    )
}

/// Sets the features `have` holds in `features`.
pub(super) fn set(features: &mut vk::PhysicalDeviceFeatures, have: StatisticsFeatures) {
    if have.query {
        features.pipeline_statistics_query = vk::TRUE;
    }
    if have.inherited {
        features.inherited_queries = vk::TRUE;
    }
}

/// The application's 1.0 features, and whether they came from a `VkPhysicalDeviceFeatures2`
/// in its chain (all off when it named none).
///
/// # Safety
/// `create_info`'s pointers and chain must be valid.
unsafe fn app_features(
    create_info: &vk::DeviceCreateInfo<'_>,
) -> (vk::PhysicalDeviceFeatures, bool) {
    // SAFETY: a valid pointer or null (the caller's promise).
    if let Some(f) = unsafe { create_info.p_enabled_features.as_ref() } {
        return (*f, false);
    }
    let mut next = create_info.p_next.cast::<vk::BaseInStructure>();
    while !next.is_null() {
        // SAFETY: every element of a valid chain starts with sType/pNext, and the structure
        // is read as the type its sType names.
        unsafe {
            if (*next).s_type == vk::StructureType::PHYSICAL_DEVICE_FEATURES_2 {
                return ((*next.cast::<vk::PhysicalDeviceFeatures2>()).features, true);
            }
            next = (*next).p_next;
        }
    }
    (vk::PhysicalDeviceFeatures::default(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(query: bool, inherited: bool) -> vk::PhysicalDeviceFeatures {
        vk::PhysicalDeviceFeatures::default()
            .pipeline_statistics_query(query)
            .inherited_queries(inherited)
    }

    #[test]
    fn what_the_device_offers_is_added_to_what_the_application_asked() {
        let app = vk::PhysicalDeviceFeatures::default().geometry_shader(true);
        let (have, patch) = decide(&device(true, true), &app, false, true);
        assert_eq!(
            have,
            StatisticsFeatures {
                query: true,
                inherited: true,
                mesh: MeshQueries::NotUsed,
                uncopied: false,
            }
        );
        let CorePatch::Pointer(f) = patch else {
            panic!("{patch:?}")
        };
        assert_eq!(f.pipeline_statistics_query, vk::TRUE);
        assert_eq!(f.inherited_queries, vk::TRUE);
        assert_eq!(f.geometry_shader, vk::TRUE, "the application's own kept");
        // In a VkPhysicalDeviceFeatures2: set in the layer's copy of it.
        let (_, patch) = decide(&device(true, false), &app, true, true);
        assert!(matches!(patch, CorePatch::InFeatures2), "{patch:?}");
    }

    #[test]
    fn nothing_changes_when_asked_already_or_not_offered() {
        let (have, patch) = decide(&device(true, true), &device(true, true), false, true);
        assert!(have.query && have.inherited);
        assert!(matches!(patch, CorePatch::None), "{patch:?}");
        let (have, patch) = decide(
            &device(false, true),
            &vk::PhysicalDeviceFeatures::default(),
            false,
            true,
        );
        assert_eq!(
            have,
            StatisticsFeatures::default(),
            "no inherited queries without statistics"
        );
        assert!(matches!(patch, CorePatch::None), "{patch:?}");
        // Hardware counters: inheritedQueries alone, pipeline statistics left as asked.
        let (have, patch) = decide(
            &device(true, true),
            &vk::PhysicalDeviceFeatures::default(),
            false,
            false,
        );
        assert!(!have.query && have.inherited, "{have:?}");
        let CorePatch::Pointer(f) = patch else {
            panic!("{patch:?}")
        };
        assert_eq!(f.pipeline_statistics_query, vk::FALSE);
        assert_eq!(f.inherited_queries, vk::TRUE);
    }
}
