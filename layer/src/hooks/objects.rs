//! Render passes, images and image views: the layer notes what tracepoint arguments need
//! (formats, samples, load/store operations, subpass view masks) when they are created.

use ash::vk;

use super::slice;
use crate::trace::objects::{AttachmentInfo, ImageInfo, RenderPassInfo};

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

/// # Safety
/// Vulkan's rules for `vkCreateRenderPass`.
pub unsafe extern "system" fn create_render_pass(
    device: vk::Device,
    p_info: *const vk::RenderPassCreateInfo<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_pass: *mut vk::RenderPass,
) -> vk::Result {
    let dev = device_or!(device, vk::Result::ERROR_DEVICE_LOST);
    // SAFETY: forwarded with the application's arguments.
    let result =
        unsafe { (dev.dispatch.fp_v1_0.create_render_pass)(device, p_info, p_allocator, p_pass) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        tracer.guarded("vkCreateRenderPass", || {
            // SAFETY: a valid create info; the driver wrote the render pass.
            let (info, pass) = unsafe { (&*p_info, *p_pass) };
            // SAFETY: the info's arrays and chain are valid.
            let (attachments, view_masks) = unsafe {
                (
                    slice(info.p_attachments, info.attachment_count),
                    multiview_masks(info.p_next, info.subpass_count),
                )
            };
            let attachments = attachments
                .iter()
                .map(|a| attachment(a.format, a.samples, a.load_op, a.store_op))
                .collect();
            tracer.objects.add_render_pass(
                pass,
                RenderPassInfo {
                    attachments,
                    view_masks,
                },
            );
        });
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkCreateRenderPass2` (and KHR).
pub unsafe extern "system" fn create_render_pass2(
    device: vk::Device,
    p_info: *const vk::RenderPassCreateInfo2<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_pass: *mut vk::RenderPass,
) -> vk::Result {
    let dev = device_or!(device, vk::Result::ERROR_DEVICE_LOST);
    let Some(next) = dev.dispatch.ext.create_render_pass2 else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { next(device, p_info, p_allocator, p_pass) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        tracer.guarded("vkCreateRenderPass2", || {
            // SAFETY: a valid create info with valid arrays; the driver wrote the pass.
            let (info, pass) = unsafe { (&*p_info, *p_pass) };
            // SAFETY: the info's arrays hold the counts it gives.
            let (attachments, subpasses) = unsafe {
                (
                    slice(info.p_attachments, info.attachment_count),
                    slice(info.p_subpasses, info.subpass_count),
                )
            };
            let attachments = attachments
                .iter()
                .map(|a| attachment(a.format, a.samples, a.load_op, a.store_op))
                .collect();
            let view_masks = subpasses.iter().map(|s| s.view_mask).collect();
            tracer.objects.add_render_pass(
                pass,
                RenderPassInfo {
                    attachments,
                    view_masks,
                },
            );
        });
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkDestroyRenderPass`.
pub unsafe extern "system" fn destroy_render_pass(
    device: vk::Device,
    pass: vk::RenderPass,
    p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    let dev = device_or!(device);
    // SAFETY: forwarded with the application's arguments.
    unsafe { (dev.dispatch.fp_v1_0.destroy_render_pass)(device, pass, p_allocator) };
    if let Some(tracer) = dev.tracer.as_ref() {
        tracer.guarded("vkDestroyRenderPass", || {
            tracer.objects.remove_render_pass(pass)
        });
    }
}

/// # Safety
/// Vulkan's rules for `vkCreateImage`.
pub unsafe extern "system" fn create_image(
    device: vk::Device,
    p_info: *const vk::ImageCreateInfo<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_image: *mut vk::Image,
) -> vk::Result {
    let dev = device_or!(device, vk::Result::ERROR_DEVICE_LOST);
    // SAFETY: forwarded with the application's arguments.
    let result =
        unsafe { (dev.dispatch.fp_v1_0.create_image)(device, p_info, p_allocator, p_image) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        // SAFETY: a valid create info; the driver wrote the image.
        let (info, image) = unsafe { (&*p_info, *p_image) };
        tracer.guarded("vkCreateImage", || {
            tracer.objects.add_image(
                image,
                ImageInfo {
                    format: info.format,
                    samples: info.samples,
                },
            )
        });
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkDestroyImage`.
pub unsafe extern "system" fn destroy_image(
    device: vk::Device,
    image: vk::Image,
    p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    let dev = device_or!(device);
    // SAFETY: forwarded with the application's arguments.
    unsafe { (dev.dispatch.fp_v1_0.destroy_image)(device, image, p_allocator) };
    if let Some(tracer) = dev.tracer.as_ref() {
        tracer.guarded("vkDestroyImage", || tracer.objects.remove_image(image));
    }
}

/// # Safety
/// Vulkan's rules for `vkCreateImageView`.
pub unsafe extern "system" fn create_image_view(
    device: vk::Device,
    p_info: *const vk::ImageViewCreateInfo<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_view: *mut vk::ImageView,
) -> vk::Result {
    let dev = device_or!(device, vk::Result::ERROR_DEVICE_LOST);
    // SAFETY: forwarded with the application's arguments.
    let result =
        unsafe { (dev.dispatch.fp_v1_0.create_image_view)(device, p_info, p_allocator, p_view) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        // SAFETY: a valid create info; the driver wrote the view.
        let (info, view) = unsafe { (&*p_info, *p_view) };
        tracer.guarded("vkCreateImageView", || {
            tracer.objects.add_view(view, info.image, info.format)
        });
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkDestroyImageView`.
pub unsafe extern "system" fn destroy_image_view(
    device: vk::Device,
    view: vk::ImageView,
    p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    let dev = device_or!(device);
    // SAFETY: forwarded with the application's arguments.
    unsafe { (dev.dispatch.fp_v1_0.destroy_image_view)(device, view, p_allocator) };
    if let Some(tracer) = dev.tracer.as_ref() {
        tracer.guarded("vkDestroyImageView", || tracer.objects.remove_view(view));
    }
}

/// # Safety
/// Vulkan's rules for `vkCreateSwapchainKHR`.
pub unsafe extern "system" fn create_swapchain(
    device: vk::Device,
    p_info: *const vk::SwapchainCreateInfoKHR<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_swapchain: *mut vk::SwapchainKHR,
) -> vk::Result {
    let dev = device_or!(device, vk::Result::ERROR_DEVICE_LOST);
    let Some(next) = dev.dispatch.ext.create_swapchain else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { next(device, p_info, p_allocator, p_swapchain) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        // SAFETY: a valid create info; the driver wrote the swapchain.
        let (format, swapchain) = unsafe { ((*p_info).image_format, *p_swapchain) };
        tracer.guarded("vkCreateSwapchainKHR", || {
            tracer.objects.add_swapchain(swapchain, format)
        });
    }
    result
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
/// Vulkan's rules for `vkDestroySwapchainKHR`.
pub unsafe extern "system" fn destroy_swapchain(
    device: vk::Device,
    swapchain: vk::SwapchainKHR,
    p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    let dev = device_or!(device);
    let Some(next) = dev.dispatch.ext.destroy_swapchain else {
        return;
    };
    // SAFETY: forwarded with the application's arguments.
    unsafe { next(device, swapchain, p_allocator) };
    if let Some(tracer) = dev.tracer.as_ref() {
        tracer.guarded("vkDestroySwapchainKHR", || {
            tracer.objects.remove_swapchain(swapchain)
        });
    }
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
