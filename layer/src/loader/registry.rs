//! Per-instance and per-device state, found from any dispatchable handle through the
//! loader's dispatch key (the table pointer at the start of every dispatchable object: a
//! device, its queues and its command buffers share one).
//!
//! The maps are behind `RwLock`s that are only held for a look-up. Devices are also found
//! without any lock or shared write, since every `vkCmd*` call starts with this look-up: a
//! fixed array of (dispatch key, device) slots read with plain atomic loads (see
//! [`Registry::device_of`]).
//!
//! The device registry is generic over its record, so that the loader does not know what the
//! layer keeps for a device (the hooks' record holds the trace core); each use is
//! monomorphised, so the look-up is the same loads as with a concrete record.

use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use ash::vk;
use ash::vk::Handle;
use parking_lot::RwLock;

use super::dispatch::InstanceDispatch;

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
    /// The rest of `VkApplicationInfo`, for the trace's header.
    pub application: Application,
}

/// `VkApplicationInfo`'s names and versions (empty and 0 where the application gave none).
#[derive(Clone, Debug, Default)]
pub struct Application {
    pub name: String,
    pub version: u32,
    pub engine_name: String,
    pub engine_version: u32,
}

static INSTANCES: LazyLock<RwLock<HashMap<DispatchKey, Arc<Instance>>>> =
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

/// Devices found without a lock; more live devices than this are found through the map.
const FAST_SLOTS: usize = 32;

/// A device's dispatch key and its record. A key of 0 marks a free slot.
struct FastSlot<R> {
    key: AtomicUsize,
    device: AtomicPtr<R>,
}

impl<R> FastSlot<R> {
    const fn free() -> FastSlot<R> {
        FastSlot {
            key: AtomicUsize::new(0),
            device: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

type DeviceMap<R> = RwLock<HashMap<DispatchKey, Arc<R>>>;

/// The devices' records `R`, by dispatch key; meant to be a `static`.
pub struct Registry<R> {
    map: LazyLock<DeviceMap<R>>,
    fast: [FastSlot<R>; FAST_SLOTS],
    /// Slots ever used: look-ups scan no further.
    fast_used: AtomicUsize,
}

impl<R> Registry<R> {
    pub const fn new() -> Registry<R> {
        Registry {
            map: LazyLock::new(DeviceMap::default),
            fast: [const { FastSlot::free() }; FAST_SLOTS],
            fast_used: AtomicUsize::new(0),
        }
    }

    /// Inserts and removes happen under the map's write lock, so the slots have one writer
    /// at a time. The record's pointer is stored before its key (release), and a reader
    /// loads the key (acquire) before the pointer, so a key it matches comes with its own
    /// record.
    pub fn insert_device(&self, key: DispatchKey, device: Arc<R>) {
        let mut map = self.map.write();
        let free = self
            .fast
            .iter()
            .enumerate()
            .find(|(_, s)| s.key.load(Ordering::Relaxed) == 0);
        if let Some((index, slot)) = free {
            slot.device
                .store(Arc::as_ptr(&device).cast_mut(), Ordering::Relaxed);
            slot.key.store(key, Ordering::Release);
            self.fast_used.fetch_max(index + 1, Ordering::Release);
        }
        map.insert(key, device);
    }

    pub fn remove_device(&self, key: DispatchKey) -> Option<Arc<R>> {
        let mut map = self.map.write();
        if let Some(slot) = self
            .fast
            .iter()
            .find(|s| s.key.load(Ordering::Relaxed) == key)
        {
            slot.key.store(0, Ordering::Release);
            slot.device.store(std::ptr::null_mut(), Ordering::Relaxed);
        }
        map.remove(&key)
    }

    pub fn device(&self, key: DispatchKey) -> Option<Arc<R>> {
        self.map.read().get(&key).cloned()
    }

    /// The device owning a queue, command buffer or the device itself, found without a
    /// lock.
    ///
    /// The record stays valid for as long as the caller may use `handle`: Vulkan forbids
    /// destroying a device while any of its objects is used in another call
    /// (`vkDestroyDevice` requires its children destroyed and host access to the device
    /// synchronised), and the record is only freed after `vkDestroyDevice` removed it.
    ///
    /// # Safety
    /// `handle` must be a live dispatchable object of a device, used by the caller in a call
    /// the application made; the result must not outlive that call.
    #[inline(always)]
    pub unsafe fn device_of<H: Handle>(&self, handle: H) -> Option<&R> {
        // SAFETY: forwarded from the caller.
        let key = unsafe { dispatch_key(handle) };
        // The first device, tested before the count of slots in use is read: most
        // processes have one.
        let first = &self.fast[0];
        if first.key.load(Ordering::Acquire) == key {
            // SAFETY: as below.
            return unsafe { first.device.load(Ordering::Relaxed).as_ref() };
        }
        let used = self.fast_used.load(Ordering::Acquire).min(FAST_SLOTS);
        // The first slot was tested above.
        for slot in self.fast[..used].iter().skip(1) {
            if slot.key.load(Ordering::Acquire) == key {
                let device = slot.device.load(Ordering::Relaxed);
                // SAFETY: a slot's pointer is its key's record, kept alive by the map until
                // `vkDestroyDevice`, which cannot run during this call (see above).
                return unsafe { device.as_ref() };
            }
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.device_in_map(key) }
    }

    /// More live devices than fast slots: the rest are found in the map.
    ///
    /// # Safety
    /// As [`Self::device_of`].
    #[cold]
    unsafe fn device_in_map(&self, key: DispatchKey) -> Option<&R> {
        let map = self.map.read();
        let device: *const R = Arc::as_ptr(map.get(&key)?);
        // SAFETY: as in `device_of`; the map keeps the record until `vkDestroyDevice`.
        unsafe { device.as_ref() }
    }

    /// Every live device; used at process exit to write what is still pending.
    pub fn all_devices(&self) -> Vec<Arc<R>> {
        self.map.read().values().cloned().collect()
    }
}

impl<R> Default for Registry<R> {
    fn default() -> Registry<R> {
        Registry::new()
    }
}
