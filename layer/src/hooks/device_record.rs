//! What the layer keeps for one `VkDevice`, and the registry of them: the loader's generic
//! [`Registry`] made for this record (see `crate::loader::registry`).

use std::sync::Arc;

use ash::vk::Handle;

use crate::loader::dispatch::DeviceDispatch;
use crate::loader::registry::{DispatchKey, Registry};
use crate::trace::DeviceTracer;

/// What the layer keeps for one `VkDevice`.
pub struct Device {
    pub dispatch: Arc<DeviceDispatch>,
    pub set_loader_data: Option<ash_layer::PFN_vkSetDeviceLoaderData>,
    /// The trace core; `None` when tracing is off for this process or could not start.
    pub tracer: Option<DeviceTracer>,
    /// The profiling lock, taken for hardware counters (`GPU_TRACE_COUNTERS=perf:...`).
    pub profiling_lock: parking_lot::Mutex<Option<crate::gpu::perf_counters::ProfilingLock>>,
}

static DEVICES: Registry<Device> = Registry::new();

pub fn insert_device(key: DispatchKey, device: Arc<Device>) {
    DEVICES.insert_device(key, device);
}

pub fn remove_device(key: DispatchKey) -> Option<Arc<Device>> {
    DEVICES.remove_device(key)
}

pub fn device(key: DispatchKey) -> Option<Arc<Device>> {
    DEVICES.device(key)
}

/// The device owning a queue, command buffer or the device itself, found without a lock
/// (see [`Registry::device_of`]).
///
/// # Safety
/// As [`Registry::device_of`].
#[inline(always)]
pub unsafe fn device_of<H: Handle>(handle: H) -> Option<&'static Device> {
    // SAFETY: forwarded from the caller.
    unsafe { DEVICES.device_of(handle) }
}

/// Every live device.
pub fn all_devices() -> Vec<Arc<Device>> {
    DEVICES.all_devices()
}

/// How many live devices are traced (the control socket's `status`).
pub fn traced_devices() -> usize {
    all_devices().iter().filter(|d| d.tracer.is_some()).count()
}
