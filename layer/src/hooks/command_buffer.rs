//! Command pools and command buffers: the life of each command buffer's trace.
//!
//! Each hook calls down first where the driver's answer decides what the layer does
//! (creation, allocation, begin) and last where the layer must act while the object still
//! exists (end: the closing timestamp goes into the command buffer before it is ended).

use ash::vk;

/// # Safety
/// Vulkan's rules for `vkCreateCommandPool`.
pub unsafe extern "system" fn create_command_pool(
    device_handle: vk::Device,
    p_create_info: *const vk::CommandPoolCreateInfo<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_pool: *mut vk::CommandPool,
) -> vk::Result {
    let dev = device_or!(device_handle, vk::Result::ERROR_DEVICE_LOST);
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe {
        (dev.dispatch.fp_v1_0.create_command_pool)(
            device_handle,
            p_create_info,
            p_allocator,
            p_pool,
        )
    };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        // SAFETY: valid create info; the driver wrote the pool.
        let (family, pool) = unsafe { ((*p_create_info).queue_family_index, *p_pool) };
        tracer.guarded("vkCreateCommandPool", || tracer.pool_created(pool, family));
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkResetCommandPool`.
pub unsafe extern "system" fn reset_command_pool(
    device_handle: vk::Device,
    pool: vk::CommandPool,
    flags: vk::CommandPoolResetFlags,
) -> vk::Result {
    let dev = device_or!(device_handle, vk::Result::ERROR_DEVICE_LOST);
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { (dev.dispatch.fp_v1_0.reset_command_pool)(device_handle, pool, flags) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        tracer.guarded("vkResetCommandPool", || tracer.pool_reset(pool));
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkDestroyCommandPool`.
pub unsafe extern "system" fn destroy_command_pool(
    device_handle: vk::Device,
    pool: vk::CommandPool,
    p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    let dev = device_or!(device_handle);
    // SAFETY: forwarded with the application's arguments.
    unsafe { (dev.dispatch.fp_v1_0.destroy_command_pool)(device_handle, pool, p_allocator) };
    if let Some(tracer) = dev.tracer.as_ref() {
        tracer.guarded("vkDestroyCommandPool", || tracer.pool_destroyed(pool));
    }
}

/// # Safety
/// Vulkan's rules for `vkAllocateCommandBuffers`.
pub unsafe extern "system" fn allocate_command_buffers(
    device_handle: vk::Device,
    p_allocate_info: *const vk::CommandBufferAllocateInfo<'_>,
    p_command_buffers: *mut vk::CommandBuffer,
) -> vk::Result {
    let dev = device_or!(device_handle, vk::Result::ERROR_DEVICE_LOST);
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe {
        (dev.dispatch.fp_v1_0.allocate_command_buffers)(
            device_handle,
            p_allocate_info,
            p_command_buffers,
        )
    };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        // SAFETY: on success the driver wrote `command_buffer_count` handles.
        let (info, cbs) = unsafe {
            let info = &*p_allocate_info;
            (
                info,
                std::slice::from_raw_parts(p_command_buffers, info.command_buffer_count as usize),
            )
        };
        tracer.guarded("vkAllocateCommandBuffers", || {
            tracer.allocated(info.command_pool, info.level, cbs)
        });
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkFreeCommandBuffers`.
pub unsafe extern "system" fn free_command_buffers(
    device_handle: vk::Device,
    pool: vk::CommandPool,
    count: u32,
    p_command_buffers: *const vk::CommandBuffer,
) {
    let dev = device_or!(device_handle);
    if let Some(tracer) = dev.tracer.as_ref() {
        if !p_command_buffers.is_null() {
            // SAFETY: the application passes `count` handles (some may be null).
            let cbs = unsafe { std::slice::from_raw_parts(p_command_buffers, count as usize) };
            tracer.guarded("vkFreeCommandBuffers", || tracer.freed(pool, cbs));
        }
    }
    // SAFETY: forwarded with the application's arguments.
    unsafe {
        (dev.dispatch.fp_v1_0.free_command_buffers)(device_handle, pool, count, p_command_buffers)
    };
}

/// # Safety
/// Vulkan's rules for `vkResetCommandBuffer`.
pub unsafe extern "system" fn reset_command_buffer(
    cb: vk::CommandBuffer,
    flags: vk::CommandBufferResetFlags,
) -> vk::Result {
    let dev = device_or!(cb, vk::Result::ERROR_DEVICE_LOST);
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { (dev.dispatch.fp_v1_0.reset_command_buffer)(cb, flags) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        tracer.guarded("vkResetCommandBuffer", || tracer.reset_command_buffer(cb));
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkBeginCommandBuffer`.
pub unsafe extern "system" fn begin_command_buffer(
    cb: vk::CommandBuffer,
    p_begin_info: *const vk::CommandBufferBeginInfo<'_>,
) -> vk::Result {
    let dev = device_or!(cb, vk::Result::ERROR_DEVICE_LOST);
    // A secondary inherits the statistics of the queries a primary may have active
    // across vkCmdExecuteCommands: the driver gets a copy of the begin info that says so.
    let inherit = dev.tracer.as_ref().and_then(|tracer| {
        tracer
            // SAFETY: `cb` is the command buffer of the application's current call.
            .guarded("vkBeginCommandBuffer", || unsafe {
                tracer.statistics_to_inherit(cb)
            })
            .flatten()
    });
    // Declared here: they live across the call.
    let mut begin: vk::CommandBufferBeginInfo<'_>;
    let mut inheritance: vk::CommandBufferInheritanceInfo<'_>;
    // SAFETY: the application's valid begin info, and its inheritance info where given.
    let given = unsafe { (*p_begin_info).p_inheritance_info.as_ref() };
    let p_down = match (inherit, given) {
        (Some(statistics), Some(given)) => {
            inheritance = *given;
            inheritance.pipeline_statistics |= statistics;
            // SAFETY: as above.
            begin = unsafe { *p_begin_info };
            begin.p_inheritance_info = &inheritance;
            &begin as *const vk::CommandBufferBeginInfo<'_>
        }
        _ => p_begin_info,
    };
    // SAFETY: forwarded with the application's arguments (or the copy above, which lives
    // across the call).
    let result = unsafe { (dev.dispatch.fp_v1_0.begin_command_buffer)(cb, p_down) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, dev.tracer.as_ref()) {
        // SAFETY: valid begin info (the call down succeeded with it).
        let info = unsafe { &*p_begin_info };
        tracer.guarded("vkBeginCommandBuffer", || tracer.begin(cb, info));
    }
    result
}

/// # Safety
/// Vulkan's rules for `vkEndCommandBuffer`.
pub unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    let dev = device_or!(cb, vk::Result::ERROR_DEVICE_LOST);
    if let Some(tracer) = dev.tracer.as_ref() {
        tracer.guarded("vkEndCommandBuffer", || tracer.end(cb));
    }
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { (dev.dispatch.fp_v1_0.end_command_buffer)(cb) };
    if let (false, Some(tracer)) = (result == vk::Result::SUCCESS, dev.tracer.as_ref()) {
        // A command buffer that failed to end cannot be submitted: forget its trace.
        tracer.guarded("vkEndCommandBuffer", || tracer.reset_command_buffer(cb));
    }
    result
}
