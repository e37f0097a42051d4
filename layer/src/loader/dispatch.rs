//! The next layer's function tables.
//!
//! `ash`'s tables are loaded from the next layer's `vkGet*ProcAddr`. Their stand-ins for
//! missing functions panic, which must never happen inside an application, so every function
//! the layer calls on its own behalf is checked to be present ([`DeviceDispatch::missing`])
//! and promoted functions fall back to their KHR names (every alias the Vulkan registry
//! gives, see [`names_of`]).

use std::ffi::CStr;

use ash::vk;

use super::command_aliases::names_of;

pub struct InstanceDispatch {
    pub handle: vk::Instance,
    pub get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    pub fp_v1_0: ash::InstanceFnV1_0,
    pub get_physical_device_features2: Option<vk::PFN_vkGetPhysicalDeviceFeatures2>,
    pub get_physical_device_properties2: Option<vk::PFN_vkGetPhysicalDeviceProperties2>,
}

impl InstanceDispatch {
    /// `api_version` and `has_properties2_ext` say what the application made usable: the
    /// layer only calls `vkGetPhysicalDeviceFeatures2` and `vkGetPhysicalDeviceProperties2`
    /// where the instance allows it (1.1, or `VK_KHR_get_physical_device_properties2`
    /// enabled), never beyond.
    ///
    /// # Safety
    /// `gipa` must be the next layer's `vkGetInstanceProcAddr` and `instance` a live instance.
    pub unsafe fn load(
        gipa: vk::PFN_vkGetInstanceProcAddr,
        instance: vk::Instance,
        api_version: u32,
        has_properties2_ext: bool,
    ) -> Self {
        // SAFETY: the caller guarantees gipa and instance; names are NUL-terminated.
        let load = |name: &CStr| unsafe { raw_proc(gipa(instance, name.as_ptr())) };
        let fp_v1_0 = ash::InstanceFnV1_0::load(load);
        let (features2_name, properties2_name) = if api_version >= vk::API_VERSION_1_1 {
            (
                Some(c"vkGetPhysicalDeviceFeatures2"),
                Some(c"vkGetPhysicalDeviceProperties2"),
            )
        } else if has_properties2_ext {
            (
                Some(c"vkGetPhysicalDeviceFeatures2KHR"),
                Some(c"vkGetPhysicalDeviceProperties2KHR"),
            )
        } else {
            (None, None)
        };
        let get_physical_device_features2 =
            features2_name
                .and_then(|name| first_of(load, &[name]))
                // SAFETY: both names resolve to functions of this exact signature.
                .map(|p| unsafe {
                    std::mem::transmute::<
                        *const std::ffi::c_void,
                        vk::PFN_vkGetPhysicalDeviceFeatures2,
                    >(p)
                });
        let get_physical_device_properties2 =
            properties2_name
                .and_then(|name| first_of(load, &[name]))
                // SAFETY: both names resolve to functions of this exact signature.
                .map(|p| unsafe {
                    std::mem::transmute::<
                        *const std::ffi::c_void,
                        vk::PFN_vkGetPhysicalDeviceProperties2,
                    >(p)
                });
        InstanceDispatch {
            handle: instance,
            get_instance_proc_addr: gipa,
            fp_v1_0,
            get_physical_device_features2,
            get_physical_device_properties2,
        }
    }
}

/// Device functions of the next layer. Core 1.0 functions come from `ash`'s table; the few
/// newer ones the layer itself needs are optional.
pub struct DeviceDispatch {
    pub handle: vk::Device,
    pub get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
    pub fp_v1_0: ash::DeviceFnV1_0,
    pub queue_submit2: Option<vk::PFN_vkQueueSubmit2>,
    pub queue_present_khr: Option<vk::PFN_vkQueuePresentKHR>,
    pub wait_semaphores: Option<vk::PFN_vkWaitSemaphores>,
    pub get_semaphore_counter_value: Option<vk::PFN_vkGetSemaphoreCounterValue>,
    /// `vkSignalSemaphore`: completes batches left waiting for a signal once the application
    /// waited for its queue to go idle.
    pub signal_semaphore: Option<vk::PFN_vkSignalSemaphore>,
    /// `vkResetQueryPool` (host query reset), where the next layer has it.
    pub reset_query_pool: Option<vk::PFN_vkResetQueryPool>,
    /// Commands newer than 1.0 or from extensions that the layer intercepts.
    pub ext: DeviceExtFns,
    /// Core 1.0 functions the layer calls for its own work that the next layer lacks; a
    /// device with any missing is not traced.
    pub missing: Vec<&'static CStr>,
}

/// The core 1.0 functions the trace core calls on its own behalf.
const REQUIRED: &[&CStr] = &[
    c"vkDestroyDevice",
    c"vkGetDeviceQueue",
    c"vkQueueSubmit",
    c"vkCreateQueryPool",
    c"vkDestroyQueryPool",
    c"vkCreateBuffer",
    c"vkDestroyBuffer",
    c"vkGetBufferMemoryRequirements",
    c"vkAllocateMemory",
    c"vkFreeMemory",
    c"vkMapMemory",
    c"vkBindBufferMemory",
    c"vkInvalidateMappedMemoryRanges",
    c"vkCreateCommandPool",
    c"vkDestroyCommandPool",
    c"vkAllocateCommandBuffers",
    c"vkBeginCommandBuffer",
    c"vkEndCommandBuffer",
    c"vkCmdWriteTimestamp",
    c"vkCmdResetQueryPool",
    c"vkCmdCopyQueryPoolResults",
    c"vkGetQueryPoolResults",
    c"vkCmdPipelineBarrier",
    c"vkCreateFence",
    c"vkDestroyFence",
    c"vkWaitForFences",
    c"vkResetFences",
    c"vkCreateSemaphore",
    c"vkDestroySemaphore",
];

impl DeviceDispatch {
    /// # Safety
    /// `gdpa` must be the next layer's `vkGetDeviceProcAddr` and `device` a live device.
    pub unsafe fn load(gdpa: vk::PFN_vkGetDeviceProcAddr, device: vk::Device) -> Self {
        // SAFETY: the caller guarantees gdpa and device; names are NUL-terminated.
        let load = |name: &CStr| unsafe { raw_proc(gdpa(device, name.as_ptr())) };
        let missing = REQUIRED
            .iter()
            .copied()
            .filter(|name| load(name).is_null())
            .collect();
        let fp_v1_0 = ash::DeviceFnV1_0::load(load);
        // SAFETY (each transmute below): the pointer was resolved for one of the names given,
        // and a command's core and KHR names share the signature it is cast to.
        let queue_submit2 = first_of(load, names_of("vkQueueSubmit2"))
            // SAFETY: see above.
            .map(|p| unsafe { std::mem::transmute::<_, vk::PFN_vkQueueSubmit2>(p) });
        let queue_present_khr = first_of(load, names_of("vkQueuePresentKHR"))
            // SAFETY: see above.
            .map(|p| unsafe { std::mem::transmute::<_, vk::PFN_vkQueuePresentKHR>(p) });
        let wait_semaphores = first_of(load, names_of("vkWaitSemaphores"))
            // SAFETY: see above.
            .map(|p| unsafe { std::mem::transmute::<_, vk::PFN_vkWaitSemaphores>(p) });
        let get_semaphore_counter_value = first_of(load, names_of("vkGetSemaphoreCounterValue"))
            // SAFETY: see above.
            .map(|p| unsafe { std::mem::transmute::<_, vk::PFN_vkGetSemaphoreCounterValue>(p) });
        let signal_semaphore = first_of(load, names_of("vkSignalSemaphore"))
            // SAFETY: see above.
            .map(|p| unsafe { std::mem::transmute::<_, vk::PFN_vkSignalSemaphore>(p) });
        let reset_query_pool = first_of(load, names_of("vkResetQueryPool"))
            // SAFETY: see above.
            .map(|p| unsafe { std::mem::transmute::<_, vk::PFN_vkResetQueryPool>(p) });
        let ext = DeviceExtFns::load(&load);
        DeviceDispatch {
            handle: device,
            get_device_proc_addr: gdpa,
            fp_v1_0,
            queue_submit2,
            queue_present_khr,
            wait_semaphores,
            get_semaphore_counter_value,
            signal_semaphore,
            reset_query_pool,
            ext,
            missing,
        }
    }
}

/// Turns a `PFN_vkVoidFunction` into a plain pointer (null when absent).
fn raw_proc(f: vk::PFN_vkVoidFunction) -> *const std::ffi::c_void {
    f.map_or(std::ptr::null(), |f| f as *const std::ffi::c_void)
}

/// The first of a command's `names` (see [`names_of`]) the next layer resolves.
fn first_of(
    load: impl Fn(&CStr) -> *const std::ffi::c_void,
    names: &[&CStr],
) -> Option<*const std::ffi::c_void> {
    names.iter().map(|n| load(n)).find(|p| !p.is_null())
}

/// Declares [`DeviceExtFns`]: each field is loaded from the first of its command's names the
/// next layer resolves (core name first, then the extension aliases of the registry, which
/// share the signature).
macro_rules! ext_fns {
    ($($field:ident: $pfn:ty = $name:literal;)*) => {
        /// Intercepted commands beyond Vulkan 1.0, `None` where the device has none of their
        /// names (the hooks are then never handed out).
        pub struct DeviceExtFns {
            $(pub $field: Option<$pfn>,)*
        }

        impl DeviceExtFns {
            fn load(load: &impl Fn(&CStr) -> *const std::ffi::c_void) -> Self {
                DeviceExtFns {
                    $($field: first_of(load, names_of($name)).map(|p| {
                        // SAFETY: every name of a field is the same command (or an alias of
                        // it) with the field's signature.
                        unsafe { std::mem::transmute::<*const std::ffi::c_void, $pfn>(p) }
                    }),)*
                }
            }
        }
    };
}

ext_fns! {
    cmd_dispatch_base: vk::PFN_vkCmdDispatchBase = "vkCmdDispatchBase";
    cmd_draw_indirect_count: vk::PFN_vkCmdDrawIndirectCount = "vkCmdDrawIndirectCount";
    cmd_draw_indexed_indirect_count: vk::PFN_vkCmdDrawIndexedIndirectCount = "vkCmdDrawIndexedIndirectCount";
    cmd_draw_multi: vk::PFN_vkCmdDrawMultiEXT = "vkCmdDrawMultiEXT";
    cmd_draw_multi_indexed: vk::PFN_vkCmdDrawMultiIndexedEXT = "vkCmdDrawMultiIndexedEXT";
    cmd_draw_mesh_tasks: vk::PFN_vkCmdDrawMeshTasksEXT = "vkCmdDrawMeshTasksEXT";
    cmd_draw_mesh_tasks_indirect: vk::PFN_vkCmdDrawMeshTasksIndirectEXT = "vkCmdDrawMeshTasksIndirectEXT";
    cmd_draw_mesh_tasks_indirect_count: vk::PFN_vkCmdDrawMeshTasksIndirectCountEXT = "vkCmdDrawMeshTasksIndirectCountEXT";
    cmd_begin_render_pass2: vk::PFN_vkCmdBeginRenderPass2 = "vkCmdBeginRenderPass2";
    cmd_next_subpass2: vk::PFN_vkCmdNextSubpass2 = "vkCmdNextSubpass2";
    cmd_end_render_pass2: vk::PFN_vkCmdEndRenderPass2 = "vkCmdEndRenderPass2";
    cmd_begin_rendering: vk::PFN_vkCmdBeginRendering = "vkCmdBeginRendering";
    cmd_end_rendering: vk::PFN_vkCmdEndRendering = "vkCmdEndRendering";
    cmd_copy_buffer2: vk::PFN_vkCmdCopyBuffer2 = "vkCmdCopyBuffer2";
    cmd_copy_image2: vk::PFN_vkCmdCopyImage2 = "vkCmdCopyImage2";
    cmd_copy_buffer_to_image2: vk::PFN_vkCmdCopyBufferToImage2 = "vkCmdCopyBufferToImage2";
    cmd_copy_image_to_buffer2: vk::PFN_vkCmdCopyImageToBuffer2 = "vkCmdCopyImageToBuffer2";
    cmd_blit_image2: vk::PFN_vkCmdBlitImage2 = "vkCmdBlitImage2";
    cmd_resolve_image2: vk::PFN_vkCmdResolveImage2 = "vkCmdResolveImage2";
    cmd_pipeline_barrier2: vk::PFN_vkCmdPipelineBarrier2 = "vkCmdPipelineBarrier2";
    cmd_write_timestamp2: vk::PFN_vkCmdWriteTimestamp2 = "vkCmdWriteTimestamp2";
    cmd_begin_debug_utils_label: vk::PFN_vkCmdBeginDebugUtilsLabelEXT = "vkCmdBeginDebugUtilsLabelEXT";
    cmd_end_debug_utils_label: vk::PFN_vkCmdEndDebugUtilsLabelEXT = "vkCmdEndDebugUtilsLabelEXT";
    cmd_insert_debug_utils_label: vk::PFN_vkCmdInsertDebugUtilsLabelEXT = "vkCmdInsertDebugUtilsLabelEXT";
    cmd_debug_marker_begin: vk::PFN_vkCmdDebugMarkerBeginEXT = "vkCmdDebugMarkerBeginEXT";
    cmd_debug_marker_end: vk::PFN_vkCmdDebugMarkerEndEXT = "vkCmdDebugMarkerEndEXT";
    cmd_debug_marker_insert: vk::PFN_vkCmdDebugMarkerInsertEXT = "vkCmdDebugMarkerInsertEXT";
    create_render_pass2: vk::PFN_vkCreateRenderPass2 = "vkCreateRenderPass2";
    create_swapchain: vk::PFN_vkCreateSwapchainKHR = "vkCreateSwapchainKHR";
    get_swapchain_images: vk::PFN_vkGetSwapchainImagesKHR = "vkGetSwapchainImagesKHR";
    destroy_swapchain: vk::PFN_vkDestroySwapchainKHR = "vkDestroySwapchainKHR";
    set_debug_utils_object_name: vk::PFN_vkSetDebugUtilsObjectNameEXT = "vkSetDebugUtilsObjectNameEXT";
    cmd_bind_shaders: vk::PFN_vkCmdBindShadersEXT = "vkCmdBindShadersEXT";
    cmd_begin_conditional_rendering: vk::PFN_vkCmdBeginConditionalRenderingEXT = "vkCmdBeginConditionalRenderingEXT";
    cmd_end_conditional_rendering: vk::PFN_vkCmdEndConditionalRenderingEXT = "vkCmdEndConditionalRenderingEXT";
    cmd_build_acceleration_structures: vk::PFN_vkCmdBuildAccelerationStructuresKHR = "vkCmdBuildAccelerationStructuresKHR";
    cmd_build_acceleration_structures_indirect: vk::PFN_vkCmdBuildAccelerationStructuresIndirectKHR = "vkCmdBuildAccelerationStructuresIndirectKHR";
    cmd_copy_acceleration_structure: vk::PFN_vkCmdCopyAccelerationStructureKHR = "vkCmdCopyAccelerationStructureKHR";
    cmd_copy_acceleration_structure_to_memory: vk::PFN_vkCmdCopyAccelerationStructureToMemoryKHR = "vkCmdCopyAccelerationStructureToMemoryKHR";
    cmd_copy_memory_to_acceleration_structure: vk::PFN_vkCmdCopyMemoryToAccelerationStructureKHR = "vkCmdCopyMemoryToAccelerationStructureKHR";
    cmd_write_acceleration_structures_properties: vk::PFN_vkCmdWriteAccelerationStructuresPropertiesKHR = "vkCmdWriteAccelerationStructuresPropertiesKHR";
    cmd_trace_rays: vk::PFN_vkCmdTraceRaysKHR = "vkCmdTraceRaysKHR";
    cmd_trace_rays_indirect: vk::PFN_vkCmdTraceRaysIndirectKHR = "vkCmdTraceRaysIndirectKHR";
    cmd_trace_rays_indirect2: vk::PFN_vkCmdTraceRaysIndirect2KHR = "vkCmdTraceRaysIndirect2KHR";
    cmd_execute_generated_commands: crate::vk_ext::PfnCmdExecuteGeneratedCommandsEXT = "vkCmdExecuteGeneratedCommandsEXT";
    cmd_preprocess_generated_commands: crate::vk_ext::PfnCmdPreprocessGeneratedCommandsEXT = "vkCmdPreprocessGeneratedCommandsEXT";
}
