//! Device-level hooks: destruction (draining the trace first), queue retrieval (the layer
//! needs each queue's family) and `vkDeviceWaitIdle`, after which the layer completes the
//! batches that waited for a later submission's signal (the application's wait itself is for
//! the GPU, never for the layer's writing).

use ash::vk;

use super::device_record::{self, device_of};
use super::guarded;
use crate::loader::registry::dispatch_key;

/// # Safety
/// Vulkan's rules for `vkDestroyDevice`.
pub unsafe extern "system" fn destroy_device(
    device: vk::Device,
    p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    if device == vk::Device::null() {
        return;
    }
    // SAFETY: a live device of this chain.
    let key = unsafe { dispatch_key(device) };
    let Some(record) = guarded("vkDestroyDevice", || device_record::remove_device(key)).flatten()
    else {
        return;
    };
    // Every batch already submitted is written before the layer's objects go. The
    // application waited for its work (Vulkan requires it), so the batches still waiting
    // for a signal are complete.
    if let Some(tracer) = record.tracer.as_ref() {
        guarded("vkDestroyDevice", || {
            tracer.device_idle();
            tracer.shutdown(false)
        });
    }
    if let Some(lock) = record.profiling_lock.lock().take() {
        lock.release(device);
    }
    // SAFETY: forwarded with the application's arguments.
    unsafe { (record.dispatch.fp_v1_0.destroy_device)(device, p_allocator) };
}

/// # Safety
/// Vulkan's rules for `vkGetDeviceQueue`.
pub unsafe extern "system" fn get_device_queue(
    device: vk::Device,
    family: u32,
    index: u32,
    p_queue: *mut vk::Queue,
) {
    // SAFETY: a live device of this chain.
    let Some(record) = (unsafe { device_of(device) }) else {
        return;
    };
    // SAFETY: forwarded with the application's arguments.
    unsafe { (record.dispatch.fp_v1_0.get_device_queue)(device, family, index, p_queue) };
    if let Some(tracer) = record.tracer.as_ref() {
        // SAFETY: the driver wrote the queue.
        let queue = unsafe { *p_queue };
        guarded("vkGetDeviceQueue", || {
            tracer.register_queue(queue, family, index)
        });
    }
}

/// # Safety
/// Vulkan's rules for `vkGetDeviceQueue2`.
pub unsafe extern "system" fn get_device_queue2(
    device: vk::Device,
    p_queue_info: *const vk::DeviceQueueInfo2<'_>,
    p_queue: *mut vk::Queue,
) {
    // SAFETY: a live device of this chain.
    let Some(record) = (unsafe { device_of(device) }) else {
        return;
    };
    let gdpa = record.dispatch.get_device_proc_addr;
    // SAFETY: the next layer's function for a command the application could call.
    let Some(next) = (unsafe { gdpa(device, c"vkGetDeviceQueue2".as_ptr()) }) else {
        return;
    };
    // SAFETY: the pointer is the next layer's vkGetDeviceQueue2.
    let next: vk::PFN_vkGetDeviceQueue2 = unsafe { std::mem::transmute(next) };
    // SAFETY: forwarded with the application's arguments.
    unsafe { next(device, p_queue_info, p_queue) };
    if let Some(tracer) = record.tracer.as_ref() {
        // SAFETY: the application's info is valid and the driver wrote the queue.
        let (info, queue) = unsafe { (&*p_queue_info, *p_queue) };
        guarded("vkGetDeviceQueue2", || {
            tracer.register_queue(queue, info.queue_family_index, info.queue_index)
        });
    }
}

/// # Safety
/// Vulkan's rules for `vkDeviceWaitIdle`.
pub unsafe extern "system" fn device_wait_idle(device: vk::Device) -> vk::Result {
    // SAFETY: a live device of this chain.
    let Some(record) = (unsafe { device_of(device) }) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    // SAFETY: forwarded with the application's arguments.
    let result = unsafe { (record.dispatch.fp_v1_0.device_wait_idle)(device) };
    if let (vk::Result::SUCCESS, Some(tracer)) = (result, record.tracer.as_ref()) {
        tracer.guarded("vkDeviceWaitIdle", || tracer.device_idle());
    }
    result
}
