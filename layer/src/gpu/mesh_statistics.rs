//! `meshShaderQueries` (VK_EXT_mesh_shader), which lets pipeline statistics queries count
//! task and mesh shader invocations (`GPU_TRACE_COUNTERS=pipeline`). It lives in
//! `VkPhysicalDeviceMeshShaderFeaturesEXT`, which an application that draws with mesh
//! shaders chains to its `VkDeviceCreateInfo`; the layer sets it in its copy of that
//! structure where the device offers it. An application without the structure draws no
//! mesh tasks, and needs nothing.

use ash::vk;

use crate::loader::dispatch::InstanceDispatch;

/// Task and mesh shader invocations, as a statistics query counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MeshQueries {
    /// The application does not draw with mesh shaders.
    #[default]
    NotUsed,
    /// Counted: the application asked for `meshShaderQueries`, or the layer sets it.
    Counted,
    /// The application draws with mesh shaders; the device has no `meshShaderQueries`.
    NotOffered,
}

/// What the layer does about `meshShaderQueries`: the outcome, and whether it must set the
/// feature in a copy of the application's structure.
///
/// # Safety
/// `create_info` is the application's valid `VkDeviceCreateInfo` for `physical_device`.
pub(super) unsafe fn plan(
    instance: &InstanceDispatch,
    physical_device: vk::PhysicalDevice,
    create_info: &vk::DeviceCreateInfo<'_>,
) -> (MeshQueries, bool) {
    // SAFETY: the application's chain is valid (the caller's promise).
    let Some(app) = (unsafe { app_structure(create_info) }) else {
        return (MeshQueries::NotUsed, false);
    };
    if app.mesh_shader_queries == vk::TRUE {
        return (MeshQueries::Counted, false);
    }
    if app.mesh_shader != vk::TRUE && app.task_shader != vk::TRUE {
        return (MeshQueries::NotUsed, false);
    }
    let Some(features2) = instance.get_physical_device_features2 else {
        return (MeshQueries::NotOffered, false);
    };
    let mut mesh = vk::PhysicalDeviceMeshShaderFeaturesEXT::default();
    let mut offered = vk::PhysicalDeviceFeatures2::default().push_next(&mut mesh);
    // SAFETY: a live physical device and an output chain of known structures.
    unsafe { features2(physical_device, &mut offered) };
    if mesh.mesh_shader_queries == vk::TRUE {
        (MeshQueries::Counted, true)
    } else {
        (MeshQueries::NotOffered, false)
    }
}

/// The application's `VkPhysicalDeviceMeshShaderFeaturesEXT`, if its chain has one.
///
/// # Safety
/// `create_info`'s chain must be valid.
unsafe fn app_structure(
    create_info: &vk::DeviceCreateInfo<'_>,
) -> Option<vk::PhysicalDeviceMeshShaderFeaturesEXT<'static>> {
    let mut next = create_info.p_next.cast::<vk::BaseInStructure>();
    while !next.is_null() {
        // SAFETY: every element of a valid chain starts with sType/pNext, and the structure
        // is read as the type its sType names (its pNext is dropped from the copy).
        unsafe {
            if (*next).s_type == vk::StructureType::PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT {
                let mut found = *next.cast::<vk::PhysicalDeviceMeshShaderFeaturesEXT<'static>>();
                found.p_next = std::ptr::null_mut();
                return Some(found);
            }
            next = (*next).p_next;
        }
    }
    None
}

/// The statistics a family with graphics gets beside the others when they are counted.
pub const MESH: vk::QueryPipelineStatisticFlags = vk::QueryPipelineStatisticFlags::from_raw(
    vk::QueryPipelineStatisticFlags::TASK_SHADER_INVOCATIONS_EXT.as_raw()
        | vk::QueryPipelineStatisticFlags::MESH_SHADER_INVOCATIONS_EXT.as_raw(),
);
