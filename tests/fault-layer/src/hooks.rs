//! The commands this layer can make fail. Each counts its call; when the fault plan says so
//! it returns the planned result without reaching the driver, else it calls down.

use std::ffi::CStr;

use ash::vk;

use crate::loader::next_device_fn;
use crate::{faults, shape};

/// The commands hooked, whose next functions are resolved at device creation.
pub const COMMANDS: &[&CStr] = &[
    c"vkQueueSubmit",
    c"vkQueueSubmit2",
    c"vkWaitSemaphores",
    c"vkWaitForFences",
    c"vkGetQueryPoolResults",
    c"vkCreateQueryPool",
    c"vkAllocateMemory",
    c"vkCreateBuffer",
    c"vkBeginCommandBuffer",
    c"vkSignalSemaphore",
    c"vkDestroyQueryPool",
    c"vkCmdCopyQueryPoolResults",
    c"vkEndCommandBuffer",
    c"vkGetCalibratedTimestampsKHR",
    c"vkGetCalibratedTimestampsEXT",
    c"vkDestroyDevice",
    c"vkCreateEvent",
    c"vkGetEventStatus",
];

/// The hook for `name`, where the fault plan mentions it.
pub fn lookup(name: &CStr) -> vk::PFN_vkVoidFunction {
    let n = name.to_str().ok()?;
    if shape::extra_families::enabled() {
        if let found @ Some(_) = shape::queue_hooks::lookup(n) {
            return found;
        }
    }
    if shape::shape().is_some() {
        if let found @ Some(_) = shape_lookup(n) {
            return found;
        }
    }
    let planned = |c: &str| faults::planned(c);
    match n {
        "vkQueueSubmit" if planned(n) || faults::show_submits() => hook!(queue_submit_shown),
        "vkQueueSubmit2" | "vkQueueSubmit2KHR"
            if planned("vkQueueSubmit2") || faults::show_submits() =>
        {
            hook!(queue_submit2_shown)
        }
        "vkWaitSemaphores" | "vkWaitSemaphoresKHR" if planned("vkWaitSemaphores") => {
            hook!(wait_semaphores)
        }
        "vkGetSemaphoreCounterValue" | "vkGetSemaphoreCounterValueKHR"
            if planned("vkWaitSemaphores") =>
        {
            hook!(get_semaphore_counter_value)
        }
        "vkWaitForFences" if planned(n) => hook!(wait_for_fences),
        "vkGetQueryPoolResults" if planned(n) => hook!(get_query_pool_results),
        "vkCreateQueryPool" if planned(n) => hook!(create_query_pool),
        "vkAllocateMemory" if planned(n) => hook!(allocate_memory),
        "vkCreateBuffer" if planned(n) => hook!(create_buffer),
        "vkCreateEvent" if planned(n) => hook!(create_event),
        "vkGetEventStatus" if planned(n) => hook!(get_event_status),
        "vkBeginCommandBuffer" if planned(n) => hook!(begin_command_buffer),
        "vkBeginCommandBuffer" if faults::show_submits() => hook!(begin_command_buffer_shown),
        "vkSignalSemaphore" | "vkSignalSemaphoreKHR" if faults::show_submits() => {
            hook!(signal_semaphore_shown)
        }
        _ => None,
    }
}

/// The hooks of a hardware shape (see [`shape`]); they check the fault plan too.
fn shape_lookup(n: &str) -> vk::PFN_vkVoidFunction {
    use shape::{gpu_pass, queries};
    match n {
        "vkGetQueryPoolResults" => hook!(queries::get_query_pool_results),
        "vkCreateQueryPool" => hook!(queries::create_query_pool),
        "vkDestroyQueryPool" => hook!(queries::destroy_query_pool),
        "vkCreateBuffer" => hook!(queries::create_buffer),
        "vkGetCalibratedTimestampsKHR" | "vkGetCalibratedTimestampsEXT" => {
            hook!(queries::get_calibrated_timestamps)
        }
        "vkCmdCopyQueryPoolResults" => hook!(gpu_pass::cmd_copy_query_pool_results),
        "vkEndCommandBuffer" => hook!(gpu_pass::end_command_buffer),
        "vkBeginCommandBuffer" => hook!(begin_command_buffer_shaped),
        "vkDestroyDevice" => hook!(crate::loader::destroy_device),
        _ => None,
    }
}

/// A recording begins: the shape forgets the copies of the last one.
unsafe extern "system" fn begin_command_buffer_shaped(
    cb: vk::CommandBuffer,
    info: *const vk::CommandBufferBeginInfo<'_>,
) -> vk::Result {
    shape::gpu_pass::forget(cb);
    if faults::show_submits() {
        eprintln!("utrace-fault: vkBeginCommandBuffer");
    }
    // SAFETY: the caller's arguments, passed on.
    unsafe { begin_command_buffer(cb, info) }
}

/// Defines a hook: `$device` finds the device for the next layer's function.
macro_rules! faulty {
    ($name:ident, $command:literal, $pfn:ty, $handle:ident: $hty:ty, ($($arg:ident: $ty:ty),*)) => {
        unsafe extern "system" fn $name($handle: $hty $(, $arg: $ty)*) -> vk::Result {
            if let Some(result) = faults::check($command) {
                return result;
            }
            // SAFETY: a live object of a device of this chain; the pointer is the next
            // layer's function of this signature.
            unsafe {
                let name = CStr::from_bytes_with_nul_unchecked(concat!($command, "\0").as_bytes());
                let Some(next) = next_device_fn($handle, name) else {
                    return vk::Result::ERROR_DEVICE_LOST;
                };
                let next: $pfn = std::mem::transmute(next);
                next($handle $(, $arg)*)
            }
        }
    };
}

faulty!(queue_submit, "vkQueueSubmit", vk::PFN_vkQueueSubmit, queue: vk::Queue,
    (count: u32, submits: *const vk::SubmitInfo<'_>, fence: vk::Fence));
faulty!(queue_submit2, "vkQueueSubmit2", vk::PFN_vkQueueSubmit2, queue: vk::Queue,
    (count: u32, submits: *const vk::SubmitInfo2<'_>, fence: vk::Fence));
faulty!(wait_semaphores, "vkWaitSemaphores", vk::PFN_vkWaitSemaphores, device: vk::Device,
    (info: *const vk::SemaphoreWaitInfo<'_>, timeout: u64));
faulty!(wait_for_fences, "vkWaitForFences", vk::PFN_vkWaitForFences, device: vk::Device,
    (count: u32, fences: *const vk::Fence, all: vk::Bool32, timeout: u64));
faulty!(get_query_pool_results, "vkGetQueryPoolResults", vk::PFN_vkGetQueryPoolResults, device: vk::Device,
    (pool: vk::QueryPool, first: u32, count: u32, size: usize, data: *mut std::ffi::c_void, stride: u64, flags: vk::QueryResultFlags));
faulty!(create_query_pool, "vkCreateQueryPool", vk::PFN_vkCreateQueryPool, device: vk::Device,
    (info: *const vk::QueryPoolCreateInfo<'_>, alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::QueryPool));
faulty!(allocate_memory, "vkAllocateMemory", vk::PFN_vkAllocateMemory, device: vk::Device,
    (info: *const vk::MemoryAllocateInfo<'_>, alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::DeviceMemory));
faulty!(begin_command_buffer, "vkBeginCommandBuffer", vk::PFN_vkBeginCommandBuffer, cb: vk::CommandBuffer,
    (info: *const vk::CommandBufferBeginInfo<'_>));
faulty!(create_buffer, "vkCreateBuffer", vk::PFN_vkCreateBuffer, device: vk::Device,
    (info: *const vk::BufferCreateInfo<'_>, alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Buffer));
faulty!(create_event, "vkCreateEvent", vk::PFN_vkCreateEvent, device: vk::Device,
    (info: *const vk::EventCreateInfo<'_>, alloc: *const vk::AllocationCallbacks<'_>, out: *mut vk::Event));
faulty!(get_event_status, "vkGetEventStatus", vk::PFN_vkGetEventStatus, device: vk::Device,
    (event: vk::Event));

faulty!(signal_semaphore, "vkSignalSemaphore", vk::PFN_vkSignalSemaphore, device: vk::Device,
    (info: *const vk::SemaphoreSignalInfo<'_>));

/// Says each host signal of a semaphore (with `UTRACE_FAULT_SHOW_SUBMITS=1`): utrace
/// signals its timeline from the host for batches left waiting when a queue went idle.
unsafe extern "system" fn signal_semaphore_shown(
    device: vk::Device,
    info: *const vk::SemaphoreSignalInfo<'_>,
) -> vk::Result {
    // SAFETY: the caller's valid signal info.
    let value = unsafe { (*info).value };
    eprintln!("utrace-fault: vkSignalSemaphore value={value}");
    // SAFETY: the caller's arguments, passed on.
    unsafe { signal_semaphore(device, info) }
}

/// Says what the submission holds (with `UTRACE_FAULT_SHOW_SUBMITS=1`).
fn show(call: &str, batches: u32, command_buffers: u32, signals: u32) {
    if faults::show_submits() {
        eprintln!(
            "utrace-fault: {call} batches={batches} command_buffers={command_buffers} signals={signals}"
        );
    }
}

/// Says each recording begun (with `UTRACE_FAULT_SHOW_SUBMITS=1`): utrace's own command
/// buffers included, so that tests can count how often utrace records them.
unsafe extern "system" fn begin_command_buffer_shown(
    cb: vk::CommandBuffer,
    info: *const vk::CommandBufferBeginInfo<'_>,
) -> vk::Result {
    eprintln!("utrace-fault: vkBeginCommandBuffer");
    // SAFETY: the caller's arguments, passed on.
    unsafe { begin_command_buffer(cb, info) }
}

unsafe extern "system" fn queue_submit_shown(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: the caller's `count` batches.
    let batches = unsafe { slice(submits, count) };
    let cbs = batches.iter().map(|b| b.command_buffer_count).sum();
    let signals = batches.iter().map(|b| b.signal_semaphore_count).sum();
    show("vkQueueSubmit", count, cbs, signals);
    // SAFETY: the caller's arguments, passed on.
    unsafe { queue_submit(queue, count, submits, fence) }
}

unsafe extern "system" fn queue_submit2_shown(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: the caller's `count` batches.
    let batches = unsafe { slice(submits, count) };
    let cbs = batches.iter().map(|b| b.command_buffer_info_count).sum();
    let signals = batches.iter().map(|b| b.signal_semaphore_info_count).sum();
    show("vkQueueSubmit2", count, cbs, signals);
    // SAFETY: the caller's arguments, passed on.
    unsafe { queue_submit2(queue, count, submits, fence) }
}

/// `count` elements at `ptr` (none when null or empty).
///
/// # Safety
/// A non-null `ptr` points at `count` initialised elements that outlive the result.
unsafe fn slice<'a, T>(ptr: *const T, count: u32) -> &'a [T] {
    if ptr.is_null() || count == 0 {
        return &[];
    }
    // SAFETY: as the caller promises.
    unsafe { std::slice::from_raw_parts(ptr, count as usize) }
}

/// With `vkWaitSemaphores` planned to fail, timeline semaphores never advance.
unsafe extern "system" fn get_semaphore_counter_value(
    _device: vk::Device,
    _semaphore: vk::Semaphore,
    value: *mut u64,
) -> vk::Result {
    // SAFETY: the application passes a valid output pointer.
    unsafe { *value = 0 };
    vk::Result::SUCCESS
}
