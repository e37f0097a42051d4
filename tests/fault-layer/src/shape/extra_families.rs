//! The AMD shape's extra queue families, listed after the driver's, one queue each, as
//! RADV lists them beside its graphics family:
//! - a transfer-only family with `timestampValidBits` 0 (a DMA queue that is not traced);
//! - a compute family without graphics (`COMPUTE | TRANSFER`, timestamps as the shape's),
//!   which is traced and gets only the compute pipeline statistic.
//!
//! Lavapipe has one family with one queue, so each extra family's queue is that same driver
//! queue behind a handle of this layer's making ([`FakeQueue`]: a dispatchable object whose
//! first word the loader fills in like any queue's). So that the layers beneath never see
//! the families or the handles:
//! - `vkCreateDevice` asks for the driver's family instead of the extra ones;
//! - every command that takes a queue is given the driver's queue, under one lock, since
//!   the application may use "all" the queues from several threads;
//! - every queue family index the application passes (command pools, ownership barriers,
//!   sharing lists) has the extra families replaced by the driver's. A barrier between two
//!   becomes one within a family, and a concurrent sharing list of several becomes
//!   exclusive.
//!
//! What it cannot emulate: work on one queue that waits for a later submission on another
//! (wait-before-signal) would wait forever, the queues being one. The barriers of
//! `vkCmdWaitEvents2` and `vkCmdSetEvent2` are not translated.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::LazyLock;

use ash::vk;
use ash::vk::Handle;
use parking_lot::Mutex;

use super::shape;

/// The first extra family's index (the driver's family count), once known.
static FIRST: AtomicU32 = AtomicU32::new(u32::MAX);

/// How many families the shape adds: transfer-only, then compute.
pub const COUNT: u32 = 2;

/// The family whose queue the extra families' stand for.
pub const DRIVER_FAMILY: u32 = 0;

/// Whether the chosen shape lists the extra families.
pub fn enabled() -> bool {
    shape().is_some_and(|s| s.extra_families)
}

/// Notes the driver's family count: the extra families come after.
pub fn set_driver_families(count: u32) {
    FIRST.store(count, Ordering::Relaxed);
}

/// How many families the application sees beside the driver's.
pub fn listed() -> u32 {
    if enabled() {
        COUNT
    } else {
        0
    }
}

/// `family` as the driver knows it.
pub fn driver_family(family: u32) -> u32 {
    if is_extra(family) {
        DRIVER_FAMILY
    } else {
        family
    }
}

pub fn is_extra(family: u32) -> bool {
    let first = FIRST.load(Ordering::Relaxed);
    enabled() && family >= first && family - first < COUNT
}

/// The properties of the extra family at `nth` place (0: transfer, 1: compute).
pub fn properties(nth: u32) -> vk::QueueFamilyProperties {
    let (queue_flags, timestamp_valid_bits) = match nth {
        0 => (vk::QueueFlags::TRANSFER, 0),
        _ => (
            vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
            shape().map_or(64, |s| s.valid_bits),
        ),
    };
    vk::QueueFamilyProperties {
        queue_flags,
        queue_count: 1,
        timestamp_valid_bits,
        min_image_transfer_granularity: vk::Extent3D {
            width: 1,
            height: 1,
            depth: 1,
        },
    }
}

/// A queue of an extra family: the loader writes its dispatch pointer into the first
/// word, as into every dispatchable object.
#[repr(C)]
struct FakeQueue {
    dispatch: usize,
    driver: vk::Queue,
}

/// Fake queues by handle: the extra family each is of, and the driver's queue it stands for.
static FAKES: LazyLock<Mutex<HashMap<u64, (u32, vk::Queue)>>> = LazyLock::new(Default::default);
/// Held around every command given a queue while the extra families are listed.
static QUEUE_LOCK: Mutex<()> = Mutex::new(());

/// The fake queue of extra family `family` standing for `driver` (made once; it lives as
/// long as the process, like the driver's queue handles the application may keep).
///
/// # Safety
/// `driver` is a live queue handle.
pub unsafe fn fake_queue(family: u32, driver: vk::Queue) -> vk::Queue {
    let mut fakes = FAKES.lock();
    if let Some((&fake, _)) = fakes.iter().find(|(_, &v)| v == (family, driver)) {
        return vk::Queue::from_raw(fake);
    }
    // SAFETY: a dispatchable handle points at its dispatch pointer.
    let dispatch = unsafe { *(driver.as_raw() as usize as *const usize) };
    let fake = Box::leak(Box::new(FakeQueue { dispatch, driver }));
    let handle = vk::Queue::from_raw(fake as *mut FakeQueue as usize as u64);
    fakes.insert(handle.as_raw(), (family, driver));
    handle
}

/// The driver's queue for `queue` (itself unless it is a fake), and the queue lock.
pub fn driver_queue(queue: vk::Queue) -> (vk::Queue, Option<parking_lot::MutexGuard<'static, ()>>) {
    if !enabled() {
        return (queue, None);
    }
    let driver = FAKES.lock().get(&queue.as_raw()).map_or(queue, |f| f.1);
    (driver, Some(QUEUE_LOCK.lock()))
}

/// The driver's queue for an object handle naming a queue (debug names).
pub fn driver_object(kind: vk::ObjectType, handle: u64) -> u64 {
    if kind != vk::ObjectType::QUEUE || !enabled() {
        return handle;
    }
    FAKES.lock().get(&handle).map_or(handle, |f| f.1.as_raw())
}

/// A sharing list with the extra families replaced (and then repeated) families removed: the
/// mode, and the list to pass down.
pub fn sharing(mode: vk::SharingMode, families: &[u32]) -> (vk::SharingMode, Vec<u32>) {
    let mut list: Vec<u32> = Vec::with_capacity(families.len());
    for &f in families {
        let f = driver_family(f);
        if !list.contains(&f) {
            list.push(f);
        }
    }
    if mode == vk::SharingMode::CONCURRENT && list.len() < 2 {
        (vk::SharingMode::EXCLUSIVE, Vec::new())
    } else {
        (mode, list)
    }
}

/// The device's queue requests with the extra families' replaced by one of the driver's
/// family (unless asked for already); `None` when nothing changes.
///
/// # Safety
/// `info`'s queue create infos are valid.
pub unsafe fn driver_queues(
    info: &vk::DeviceCreateInfo<'_>,
) -> Option<Vec<vk::DeviceQueueCreateInfo<'static>>> {
    static PRIORITY: [f32; 1] = [1.0];
    if !enabled() || info.p_queue_create_infos.is_null() {
        return None;
    }
    // SAFETY: as the caller promises.
    let asked = unsafe {
        std::slice::from_raw_parts(
            info.p_queue_create_infos,
            info.queue_create_info_count as usize,
        )
    };
    if !asked.iter().any(|q| is_extra(q.queue_family_index)) {
        return None;
    }
    // The copies keep the application's pointers, which outlive vkCreateDevice.
    let mut queues: Vec<vk::DeviceQueueCreateInfo<'static>> =
        asked
            .iter()
            .filter(|q| !is_extra(q.queue_family_index))
            // SAFETY: only the lifetime marker changes; the pointers stay valid for the call.
            .map(|q| unsafe {
                std::mem::transmute::<
                    vk::DeviceQueueCreateInfo<'_>,
                    vk::DeviceQueueCreateInfo<'static>,
                >(*q)
            })
            .collect();
    if !queues.iter().any(|q| q.queue_family_index == DRIVER_FAMILY) {
        queues.push(
            vk::DeviceQueueCreateInfo::default()
                .queue_family_index(DRIVER_FAMILY)
                .queue_priorities(&PRIORITY),
        );
    }
    Some(queues)
}
