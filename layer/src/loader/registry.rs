//! Per-instance and per-device state, found from any dispatchable handle through the
//! loader's dispatch key (the table pointer at the start of every dispatchable object: a
//! device, its queues and its command buffers share one).
//!
//! The maps are behind `RwLock`s that are only held for a look-up; hooks then work on the
//! `Arc` they got.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use ash::vk;
use ash::vk::Handle;
use parking_lot::RwLock;

use super::dispatch::{DeviceDispatch, InstanceDispatch};

pub type DispatchKey = usize;

/// The loader's dispatch key of a dispatchable handle.
///
/// # Safety
/// `handle` must be a live dispatchable Vulkan object created through the loader.
pub unsafe fn dispatch_key<H: Handle>(handle: H) -> DispatchKey {
    // SAFETY: every dispatchable object starts with the loader's dispatch table pointer.
    unsafe { *(handle.as_raw() as usize as *const usize) }
}

pub struct Instance {
    pub dispatch: InstanceDispatch,
    /// `VkApplicationInfo::apiVersion` (1.0 when absent): the instance's highest usable API.
    pub api_version: u32,
}

/// What the layer keeps for one `VkDevice`.
pub struct Device {
    pub dispatch: Arc<DeviceDispatch>,
    pub set_loader_data: Option<ash_layer::PFN_vkSetDeviceLoaderData>,
    /// The trace core; `None` when tracing is off for this process or could not start.
    pub tracer: Option<crate::trace::DeviceTracer>,
}

static INSTANCES: LazyLock<RwLock<HashMap<DispatchKey, Arc<Instance>>>> =
    LazyLock::new(Default::default);
static DEVICES: LazyLock<RwLock<HashMap<DispatchKey, Arc<Device>>>> =
    LazyLock::new(Default::default);

pub fn insert_instance(key: DispatchKey, instance: Instance) {
    INSTANCES.write().insert(key, Arc::new(instance));
}

pub fn remove_instance(key: DispatchKey) -> Option<Arc<Instance>> {
    INSTANCES.write().remove(&key)
}

pub fn instance(key: DispatchKey) -> Option<Arc<Instance>> {
    INSTANCES.read().get(&key).cloned()
}

/// The instance of a physical device (physical devices carry their instance's key).
///
/// # Safety
/// `physical_device` must be a live physical device handle.
pub unsafe fn instance_of(physical_device: vk::PhysicalDevice) -> Option<Arc<Instance>> {
    // SAFETY: forwarded from the caller.
    instance(unsafe { dispatch_key(physical_device) })
}

pub fn insert_device(key: DispatchKey, device: Arc<Device>) {
    DEVICES.write().insert(key, device);
}

pub fn remove_device(key: DispatchKey) -> Option<Arc<Device>> {
    DEVICES.write().remove(&key)
}

pub fn device(key: DispatchKey) -> Option<Arc<Device>> {
    DEVICES.read().get(&key).cloned()
}

/// The device owning a queue, command buffer or the device itself.
///
/// # Safety
/// `handle` must be a live dispatchable object of a device.
pub unsafe fn device_of<H: Handle>(handle: H) -> Option<Arc<Device>> {
    // SAFETY: forwarded from the caller.
    device(unsafe { dispatch_key(handle) })
}

/// Every live device; used at process exit to write what is still pending.
pub fn all_devices() -> Vec<Arc<Device>> {
    DEVICES.read().values().cloned().collect()
}
