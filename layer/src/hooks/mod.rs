//! The entry points the layer intercepts, grouped by the object they act on. Each hook does
//! its own work inside [`guarded`] and calls down outside it, so a fault in the layer never
//! keeps a call from reaching the driver and no panic crosses the FFI boundary.

/// The device record of a dispatchable handle, or `return $otherwise` from the hook. A
/// handle the layer never saw cannot normally reach a hook (the loader only installs hooks
/// for devices created through this layer); if one does, the hook gives up quietly rather
/// than panic across the FFI boundary.
// Defined before the submodules so that they see it (macro_rules scope is textual).
macro_rules! device_or {
    ($handle:expr) => {
        device_or!($handle, ())
    };
    ($handle:expr, $otherwise:expr) => {
        // SAFETY: the application passes a live dispatchable object of this chain.
        match unsafe { crate::loader::registry::device_of($handle) } {
            Some(dev) => dev,
            None => return $otherwise,
        }
    };
}

pub mod command_buffer;
pub mod commands;
pub mod common_next;
pub mod device;
pub mod instance;
pub mod layer_settings;
pub mod objects;
pub mod queue;

pub use crate::guard::guarded;

pub use crate::ffi::slice;

use std::ffi::CStr;

use ash::vk;

use commands::{
    bind as bd, dispatch as cd, draw as dr, labels as lb, render_pass as rp, sync as sy,
    transfer as tr,
};

macro_rules! hook {
    ($f:path) => {
        // SAFETY: every hook has the exact signature of the command it is registered for;
        // the loader casts the pointer back to that signature.
        Some(unsafe {
            std::mem::transmute::<*const (), unsafe extern "system" fn()>($f as *const ())
        })
    };
}

/// The hook of a command whose tracepoints all hang on one `GPU_TRACEPOINTS` switch (the
/// `SWITCH` of the module `bracketed!` gives it), unless that switch is off: then the
/// application calls the next layer directly and pays nothing for the layer. The switches
/// are set from the environment before any device exists and never change.
macro_rules! switched {
    ($($seg:ident)::+) => {
        match $($seg)::+::SWITCH {
            Some(switch) if !crate::trace::tracepoints::TOGGLES[switch].is_enabled() => None,
            _ => hook!($($seg)::+),
        }
    };
}

/// Functions reachable with a null instance (besides the loader-facing ones of
/// `loader::exports`).
pub fn global_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkCreateInstance" => hook!(instance::create_instance),
        _ => None,
    }
}

/// Instance-level functions the layer always intercepts.
pub fn instance_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkDestroyInstance" => hook!(instance::destroy_instance),
        b"vkCreateDevice" => hook!(instance::create_device),
        _ => None,
    }
}

/// Device functions the layer intercepts even when it does not trace: it must know when a
/// device goes away.
pub fn device_lifetime_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkDestroyDevice" => hook!(device::destroy_device),
        _ => None,
    }
}

/// Device functions intercepted while tracing is configured.
pub fn device_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    use command_buffer as cb;
    match name.to_bytes() {
        b"vkGetDeviceQueue" => hook!(device::get_device_queue),
        b"vkGetDeviceQueue2" => hook!(device::get_device_queue2),
        b"vkCreateCommandPool" => hook!(cb::create_command_pool),
        b"vkResetCommandPool" => hook!(cb::reset_command_pool),
        b"vkDestroyCommandPool" => hook!(cb::destroy_command_pool),
        b"vkAllocateCommandBuffers" => hook!(cb::allocate_command_buffers),
        b"vkFreeCommandBuffers" => hook!(cb::free_command_buffers),
        b"vkResetCommandBuffer" => hook!(cb::reset_command_buffer),
        b"vkBeginCommandBuffer" => hook!(cb::begin_command_buffer),
        b"vkEndCommandBuffer" => hook!(cb::end_command_buffer),
        b"vkQueueSubmit" => hook!(queue::queue_submit),
        b"vkQueueSubmit2" => hook!(queue::queue_submit2),
        b"vkQueueSubmit2KHR" => hook!(queue::queue_submit2_khr),
        b"vkQueuePresentKHR" => hook!(queue::queue_present),
        b"vkQueueWaitIdle" => hook!(queue::queue_wait_idle),
        b"vkDeviceWaitIdle" => hook!(device::device_wait_idle),
        b"vkCreateRenderPass" => hook!(objects::create_render_pass),
        b"vkCreateRenderPass2" | b"vkCreateRenderPass2KHR" => hook!(objects::create_render_pass2),
        b"vkDestroyRenderPass" => hook!(objects::destroy_render_pass),
        b"vkCreateImage" => hook!(objects::create_image),
        b"vkDestroyImage" => hook!(objects::destroy_image),
        b"vkCreateImageView" => hook!(objects::create_image_view),
        b"vkDestroyImageView" => hook!(objects::destroy_image_view),
        b"vkCreateSwapchainKHR" => hook!(objects::create_swapchain),
        b"vkGetSwapchainImagesKHR" => hook!(objects::get_swapchain_images),
        b"vkDestroySwapchainKHR" => hook!(objects::destroy_swapchain),
        b"vkSetDebugUtilsObjectNameEXT" => hook!(objects::set_debug_utils_object_name),
        _ => command_hook(name),
    }
}

/// The recording commands (`vkCmd*`) the layer traces that are not bracketed.
fn command_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkCmdBeginRenderPass" => hook!(rp::cmd_begin_render_pass),
        b"vkCmdBeginRenderPass2" | b"vkCmdBeginRenderPass2KHR" => hook!(rp::cmd_begin_render_pass2),
        b"vkCmdNextSubpass" => hook!(rp::cmd_next_subpass),
        b"vkCmdNextSubpass2" | b"vkCmdNextSubpass2KHR" => hook!(rp::cmd_next_subpass2),
        b"vkCmdEndRenderPass" => hook!(rp::cmd_end_render_pass),
        b"vkCmdEndRenderPass2" | b"vkCmdEndRenderPass2KHR" => hook!(rp::cmd_end_render_pass2),
        b"vkCmdBeginRendering" | b"vkCmdBeginRenderingKHR" => hook!(rp::cmd_begin_rendering),
        b"vkCmdEndRendering" | b"vkCmdEndRenderingKHR" => hook!(rp::cmd_end_rendering),
        b"vkCmdExecuteCommands" => hook!(rp::cmd_execute_commands),
        _ => bracketed_hook(name),
    }
}

/// The bracketed recording commands (see `commands::bracketed`): each one's hook (unless its
/// switch is off), and what every device's next functions make of their idle path
/// ([`common_next`]).
macro_rules! bracketed_table {
    ($($($name:literal)|+ => $($seg:ident)::+,)*) => {
        fn bracketed_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
            match name.to_bytes() {
                $($($name)|+ => switched!($($seg)::+),)*
                _ => None,
            }
        }

        /// Takes a new device's next functions into account, before the application has
        /// the device.
        pub fn adopt_common_next(d: &crate::loader::dispatch::DeviceDispatch) {
            $($($seg)::+::adopt(d);)*
        }

        /// Makes every idle hook look its function up.
        pub fn forget_common_next() {
            $($($seg)::+::COMMON_NEXT.forget();)*
        }
    };
}

bracketed_table! {
    b"vkCmdDraw" => dr::cmd_draw,
    b"vkCmdDrawIndexed" => dr::cmd_draw_indexed,
    b"vkCmdDrawIndirect" => dr::cmd_draw_indirect,
    b"vkCmdDrawIndexedIndirect" => dr::cmd_draw_indexed_indirect,
    b"vkCmdDrawIndirectCount" | b"vkCmdDrawIndirectCountKHR" | b"vkCmdDrawIndirectCountAMD" => dr::cmd_draw_indirect_count,
    b"vkCmdDrawIndexedIndirectCount" | b"vkCmdDrawIndexedIndirectCountKHR" | b"vkCmdDrawIndexedIndirectCountAMD" => dr::cmd_draw_indexed_indirect_count,
    b"vkCmdDrawMultiEXT" => dr::cmd_draw_multi,
    b"vkCmdDrawMultiIndexedEXT" => dr::cmd_draw_multi_indexed,
    b"vkCmdDrawMeshTasksEXT" => dr::cmd_draw_mesh_tasks,
    b"vkCmdDrawMeshTasksIndirectEXT" => dr::cmd_draw_mesh_tasks_indirect,
    b"vkCmdDrawMeshTasksIndirectCountEXT" => dr::cmd_draw_mesh_tasks_indirect_count,
    b"vkCmdBindPipeline" => bd::cmd_bind_pipeline,
    b"vkCmdDispatch" => cd::cmd_dispatch,
    b"vkCmdDispatchBase" | b"vkCmdDispatchBaseKHR" => cd::cmd_dispatch_base,
    b"vkCmdDispatchIndirect" => cd::cmd_dispatch_indirect,
    b"vkCmdCopyBuffer" => tr::cmd_copy_buffer,
    b"vkCmdCopyBuffer2" | b"vkCmdCopyBuffer2KHR" => tr::cmd_copy_buffer2,
    b"vkCmdCopyImage" => tr::cmd_copy_image,
    b"vkCmdCopyImage2" | b"vkCmdCopyImage2KHR" => tr::cmd_copy_image2,
    b"vkCmdCopyBufferToImage" => tr::cmd_copy_buffer_to_image,
    b"vkCmdCopyBufferToImage2" | b"vkCmdCopyBufferToImage2KHR" => tr::cmd_copy_buffer_to_image2,
    b"vkCmdCopyImageToBuffer" => tr::cmd_copy_image_to_buffer,
    b"vkCmdCopyImageToBuffer2" | b"vkCmdCopyImageToBuffer2KHR" => tr::cmd_copy_image_to_buffer2,
    b"vkCmdBlitImage" => tr::cmd_blit_image,
    b"vkCmdBlitImage2" | b"vkCmdBlitImage2KHR" => tr::cmd_blit_image2,
    b"vkCmdResolveImage" => tr::cmd_resolve_image,
    b"vkCmdResolveImage2" | b"vkCmdResolveImage2KHR" => tr::cmd_resolve_image2,
    b"vkCmdClearColorImage" => tr::cmd_clear_color_image,
    b"vkCmdClearDepthStencilImage" => tr::cmd_clear_depth_stencil_image,
    b"vkCmdClearAttachments" => tr::cmd_clear_attachments,
    b"vkCmdFillBuffer" => tr::cmd_fill_buffer,
    b"vkCmdUpdateBuffer" => tr::cmd_update_buffer,
    b"vkCmdBeginDebugUtilsLabelEXT" => lb::cmd_begin_debug_utils_label,
    b"vkCmdEndDebugUtilsLabelEXT" => lb::cmd_end_debug_utils_label,
    b"vkCmdInsertDebugUtilsLabelEXT" => lb::cmd_insert_debug_utils_label,
    b"vkCmdDebugMarkerBeginEXT" => lb::cmd_debug_marker_begin,
    b"vkCmdDebugMarkerEndEXT" => lb::cmd_debug_marker_end,
    b"vkCmdDebugMarkerInsertEXT" => lb::cmd_debug_marker_insert,
    b"vkCmdPipelineBarrier" => sy::cmd_pipeline_barrier,
    b"vkCmdPipelineBarrier2" | b"vkCmdPipelineBarrier2KHR" => sy::cmd_pipeline_barrier2,
    b"vkCmdResetQueryPool" => sy::cmd_reset_query_pool,
    b"vkCmdBeginQuery" => sy::cmd_begin_query,
    b"vkCmdEndQuery" => sy::cmd_end_query,
    b"vkCmdCopyQueryPoolResults" => sy::cmd_copy_query_pool_results,
    b"vkCmdWriteTimestamp" => sy::cmd_write_timestamp,
    b"vkCmdWriteTimestamp2" | b"vkCmdWriteTimestamp2KHR" => sy::cmd_write_timestamp2,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_intercepted_names_resolve() {
        assert!(global_hook(c"vkCreateInstance").is_some());
        assert!(global_hook(c"vkCreateDevice").is_none());
        assert!(instance_hook(c"vkCreateDevice").is_some());
        assert!(device_hook(c"vkQueueSubmit2KHR").is_some());
        assert!(device_hook(c"vkCmdDraw").is_some());
        assert!(device_hook(c"vkCmdDrawIndirectCountAMD").is_some());
        assert!(device_hook(c"vkCmdSetViewport").is_none());
        // Sparse binding is not work the layer times: it passes through untouched.
        assert!(device_hook(c"vkQueueBindSparse").is_none());
        assert!(device_lifetime_hook(c"vkDestroyDevice").is_some());
    }
}
