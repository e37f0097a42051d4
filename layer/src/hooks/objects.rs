//! Render passes, images and image views: the layer notes what tracepoint arguments need
//! (formats, samples, load/store operations, subpass view masks) when they are created.

use ash::vk;

use super::slice;
use crate::loader::dispatch::DeviceDispatch;
use crate::trace::objects::{AttachmentInfo, ImageInfo, Objects, RenderPassInfo};
use crate::trace::DeviceTracer;

/// The view masks of a `VkRenderPassMultiviewCreateInfo` in `p_next`, if any.
///
/// # Safety
/// `p_next` must be a valid chain.
unsafe fn multiview_masks(p_next: *const std::ffi::c_void, subpasses: u32) -> Vec<u32> {
    let mut next = p_next.cast::<vk::BaseInStructure>();
    while !next.is_null() {
        // SAFETY: a valid chain element, read as the type its sType names.
        unsafe {
            if (*next).s_type == vk::StructureType::RENDER_PASS_MULTIVIEW_CREATE_INFO {
                let mv = &*next.cast::<vk::RenderPassMultiviewCreateInfo>();
                return slice(mv.p_view_masks, mv.subpass_count).to_vec();
            }
            next = (*next).p_next;
        }
    }
    vec![0; subpasses as usize]
}

/// What a tracepoint shows of an attachment (v1 and v2 descriptions alike).
fn attachment(
    format: vk::Format,
    samples: vk::SampleCountFlags,
    load_op: vk::AttachmentLoadOp,
    store_op: vk::AttachmentStoreOp,
) -> AttachmentInfo {
    AttachmentInfo {
        format,
        samples,
        load_op,
        store_op,
    }
}

/// A `vkCreate*` function: device, create info, allocator, the new handle.
type CreateFn<I, H> = unsafe extern "system" fn(
    vk::Device,
    *const I,
    *const vk::AllocationCallbacks<'_>,
    *mut H,
) -> vk::Result;
/// A `vkDestroy*` function: device, handle, allocator.
type DestroyFn<H> = unsafe extern "system" fn(vk::Device, H, *const vk::AllocationCallbacks<'_>);

/// What every create hook here does: calls the next layer's function (`next` gives it;
/// `None`: the extension's function is missing, `VK_ERROR_EXTENSION_NOT_PRESENT`), then on
/// success `note` records what the layer needs of the new object, inside
/// [`DeviceTracer::guarded`] so that a fault there never reaches the application. Returns
/// the call's result.
///
/// # Safety
/// Vulkan's rules for the command: the application's live device and valid arguments.
unsafe fn create<I, H: Copy>(
    (device, p_info, p_allocator, p_out): (
        vk::Device,
        *const I,
        *const vk::AllocationCallbacks<'_>,
        *mut H,
    ),
    call: &str,
    next: impl FnOnce(&DeviceDispatch) -> Option<CreateFn<I, H>>,
    note: impl FnOnce(&DeviceTracer, &I, H),
) -> vk::Result {
    let dev = device_or!(device, vk::Result::ERROR_DEVICE_LOST);
    let Some(next) = next(&dev.dispatch) else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { next(device, p_info, p_allocator, p_out) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        tracer.guarded(call, || {
            // SAFETY: a valid create info; the driver wrote the new handle.
            let (info, handle) = unsafe { (&*p_info, *p_out) };
            note(tracer, info, handle)
        });
    }
    result
}

/// What every destroy hook here does: calls the next layer's function (`None`: the
/// extension's function is missing, nothing is done), then drops what the layer noted of
/// the object (`forget`), inside [`DeviceTracer::guarded`].
///
/// # Safety
/// As [`create`].
unsafe fn destroy<H: Copy>(
    (device, handle, p_allocator): (vk::Device, H, *const vk::AllocationCallbacks<'_>),
    call: &str,
    next: impl FnOnce(&DeviceDispatch) -> Option<DestroyFn<H>>,
    forget: fn(&Objects, H),
) {
    let dev = device_or!(device);
    let Some(next) = next(&dev.dispatch) else {
        return;
    };
    // SAFETY: forwarded with the application's arguments.
    unsafe { next(device, handle, p_allocator) };
    if let Some(tracer) = dev.tracer.as_ref() {
        tracer.guarded(call, || forget(&tracer.objects, handle));
    }
}

/// The create hooks: `hook: "command", create info => handle, next (where the next layer's
/// function is), note (what is recorded of the new object)`. Each is [`create`].
macro_rules! create_hooks {
    ($($hook:ident: $call:literal, $info:ty => $handle:ty, next $next:expr, note $note:path;)*) => {$(
        #[doc = concat!("# Safety\nVulkan's rules for `", $call, "`.")]
        pub unsafe extern "system" fn $hook(
            device: vk::Device,
            p_info: *const $info,
            p_allocator: *const vk::AllocationCallbacks<'_>,
            p_out: *mut $handle,
        ) -> vk::Result {
            // SAFETY: the application's arguments.
            unsafe { create((device, p_info, p_allocator, p_out), $call, $next, $note) }
        }
    )*};
}

/// The destroy hooks: `hook: "command", handle, next (where the next layer's function is),
/// forget (what drops the object's record)`. Each is [`destroy`].
macro_rules! destroy_hooks {
    ($($hook:ident: $call:literal, $handle:ty, next $next:expr, forget $forget:path;)*) => {$(
        #[doc = concat!("# Safety\nVulkan's rules for `", $call, "`.")]
        pub unsafe extern "system" fn $hook(
            device: vk::Device,
            handle: $handle,
            p_allocator: *const vk::AllocationCallbacks<'_>,
        ) {
            // SAFETY: the application's arguments.
            unsafe { destroy((device, handle, p_allocator), $call, $next, $forget) }
        }
    )*};
}

create_hooks! {
    create_render_pass: "vkCreateRenderPass", vk::RenderPassCreateInfo<'_> => vk::RenderPass,
        next |d| Some(d.fp_v1_0.create_render_pass), note note_render_pass;
    create_render_pass2: "vkCreateRenderPass2", vk::RenderPassCreateInfo2<'_> => vk::RenderPass,
        next |d| d.ext.create_render_pass2, note note_render_pass2;
    create_image: "vkCreateImage", vk::ImageCreateInfo<'_> => vk::Image,
        next |d| Some(d.fp_v1_0.create_image), note note_image;
    create_image_view: "vkCreateImageView", vk::ImageViewCreateInfo<'_> => vk::ImageView,
        next |d| Some(d.fp_v1_0.create_image_view), note note_image_view;
    create_swapchain: "vkCreateSwapchainKHR", vk::SwapchainCreateInfoKHR<'_> => vk::SwapchainKHR,
        next |d| d.ext.create_swapchain, note note_swapchain;
    create_query_pool: "vkCreateQueryPool", vk::QueryPoolCreateInfo<'_> => vk::QueryPool,
        next |d| Some(d.fp_v1_0.create_query_pool), note note_query_pool;
}

destroy_hooks! {
    destroy_render_pass: "vkDestroyRenderPass", vk::RenderPass,
        next |d| Some(d.fp_v1_0.destroy_render_pass), forget Objects::remove_render_pass;
    destroy_image: "vkDestroyImage", vk::Image,
        next |d| Some(d.fp_v1_0.destroy_image), forget Objects::remove_image;
    destroy_image_view: "vkDestroyImageView", vk::ImageView,
        next |d| Some(d.fp_v1_0.destroy_image_view), forget Objects::remove_view;
    destroy_swapchain: "vkDestroySwapchainKHR", vk::SwapchainKHR,
        next |d| d.ext.destroy_swapchain, forget Objects::remove_swapchain;
    destroy_query_pool: "vkDestroyQueryPool", vk::QueryPool,
        next |d| Some(d.fp_v1_0.destroy_query_pool), forget Objects::remove_query_pool;
}

/// `vkCreateQueryPool`: a pipeline statistics pool is noted (GPU counters keep clear of
/// its queries), and a performance query pool with its counters (the command buffer's
/// range keeps clear of a query of command-buffer scope).
fn note_query_pool(tracer: &DeviceTracer, info: &vk::QueryPoolCreateInfo<'_>, pool: vk::QueryPool) {
    if info.query_type == vk::QueryType::PIPELINE_STATISTICS {
        tracer.objects.add_statistics_pool(pool);
    }
    if info.query_type == vk::QueryType::PERFORMANCE_QUERY_KHR {
        let mut next = info.p_next.cast::<vk::BaseInStructure>();
        while !next.is_null() {
            // SAFETY: a valid chain, each structure read as the type its sType names, its
            // counter list of the length it says.
            unsafe {
                if (*next).s_type == vk::StructureType::QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR {
                    let p = &*next.cast::<vk::QueryPoolPerformanceCreateInfoKHR>();
                    let counters = slice(p.p_counter_indices, p.counter_index_count);
                    tracer
                        .objects
                        .add_performance_pool(pool, p.queue_family_index, counters);
                }
                next = (*next).p_next;
            }
        }
    }
}

/// `vkCreateRenderPass`: each attachment and each subpass's view mask.
fn note_render_pass(
    tracer: &DeviceTracer,
    info: &vk::RenderPassCreateInfo<'_>,
    pass: vk::RenderPass,
) {
    // SAFETY: the info's arrays and chain are valid.
    let (attachments, view_masks) = unsafe {
        (
            slice(info.p_attachments, info.attachment_count),
            multiview_masks(info.p_next, info.subpass_count),
        )
    };
    let attachments = attachments
        .iter()
        .map(|a| attachment(a.format, a.samples, a.load_op, a.store_op));
    add_render_pass(tracer, pass, attachments, view_masks);
}

/// `vkCreateRenderPass2`: as [`note_render_pass`], the view masks from the subpasses.
fn note_render_pass2(
    tracer: &DeviceTracer,
    info: &vk::RenderPassCreateInfo2<'_>,
    pass: vk::RenderPass,
) {
    // SAFETY: the info's arrays hold the counts it gives.
    let (attachments, subpasses) = unsafe {
        (
            slice(info.p_attachments, info.attachment_count),
            slice(info.p_subpasses, info.subpass_count),
        )
    };
    let attachments = attachments
        .iter()
        .map(|a| attachment(a.format, a.samples, a.load_op, a.store_op));
    let view_masks = subpasses.iter().map(|s| s.view_mask).collect();
    add_render_pass(tracer, pass, attachments, view_masks);
}

/// Notes a render pass: its attachments, and each subpass's view mask.
fn add_render_pass(
    tracer: &DeviceTracer,
    pass: vk::RenderPass,
    attachments: impl Iterator<Item = AttachmentInfo>,
    view_masks: Vec<u32>,
) {
    let info = RenderPassInfo {
        attachments: attachments.collect(),
        view_masks,
    };
    tracer.objects.add_render_pass(pass, info);
}

fn note_image(tracer: &DeviceTracer, info: &vk::ImageCreateInfo<'_>, image: vk::Image) {
    let info = ImageInfo {
        format: info.format,
        samples: info.samples,
    };
    tracer.objects.add_image(image, info);
}

fn note_image_view(tracer: &DeviceTracer, info: &vk::ImageViewCreateInfo<'_>, view: vk::ImageView) {
    tracer.objects.add_view(view, info.image, info.format);
}

fn note_swapchain(
    tracer: &DeviceTracer,
    info: &vk::SwapchainCreateInfoKHR<'_>,
    swapchain: vk::SwapchainKHR,
) {
    tracer.objects.add_swapchain(swapchain, info.image_format);
}

/// # Safety
/// Vulkan's rules for `vkGetSwapchainImagesKHR`.
pub unsafe extern "system" fn get_swapchain_images(
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    p_count: *mut u32,
    p_images: *mut vk::Image,
) -> vk::Result {
    let dev = device_or!(device, vk::Result::ERROR_DEVICE_LOST);
    let Some(next) = dev.dispatch.ext.get_swapchain_images else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { next(device, swapchain, p_count, p_images) };
    let filled = matches!(result, vk::Result::SUCCESS | vk::Result::INCOMPLETE);
    if let (true, Some(tracer)) = (filled && !p_images.is_null(), dev.tracer.as_ref()) {
        // SAFETY: the driver wrote `*p_count` images.
        let images = unsafe { slice(p_images, *p_count) };
        tracer.guarded("vkGetSwapchainImagesKHR", || {
            tracer.objects.add_swapchain_images(swapchain, images)
        });
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkSetDebugUtilsObjectNameEXT`.
pub unsafe extern "system" fn set_debug_utils_object_name(
    device: vk::Device,
    p_info: *const vk::DebugUtilsObjectNameInfoEXT<'_>,
) -> vk::Result {
    let dev = device_or!(device, vk::Result::ERROR_DEVICE_LOST);
    let Some(next) = dev.dispatch.ext.set_debug_utils_object_name else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { next(device, p_info) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        tracer.guarded("vkSetDebugUtilsObjectNameEXT", || {
            // SAFETY: a valid name info; a name is NUL-terminated or null (unnamed).
            let (info, name) = unsafe {
                let info = &*p_info;
                let name = info
                    .p_object_name
                    .as_ref()
                    .map(|_| std::ffi::CStr::from_ptr(info.p_object_name).to_string_lossy());
                (info, name)
            };
            tracer.object_named(
                ash::vk::Handle::as_raw(device),
                info.object_type.as_raw(),
                info.object_handle,
                name.as_deref().unwrap_or(""),
            );
        });
    }
    result
}
