//! `vkCreateInstance`, `vkDestroyInstance` and `vkCreateDevice`: building the chain.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use ash::vk;

use super::device_outputs;
use super::device_record::{self, Device};
use super::guarded;
use crate::config::{Config, Counters};
use crate::gpu::caps::DeviceCaps;
use crate::gpu::core_features;
use crate::gpu::features::{self, DevicePlan};
use crate::gpu::interface::Backend;
use crate::gpu::perf_counters::{self, PerfPlan, ProfilingLock};
use crate::loader::chain;
use crate::loader::dispatch::{DeviceDispatch, InstanceDispatch};
use crate::loader::registry::{self, dispatch_key, Instance};
use crate::sink::{self, perfetto::SessionHooks};
use crate::trace::{capture_gates, DeviceTracer};

/// Devices created in this process, for `%i` and the trace's `device=`.
static DEVICE_COUNT: AtomicU32 = AtomicU32::new(0);

/// The instance's chain and record; the entry's `vkCreateInstance`
/// (`crate::entry::creation`) reads the process's configuration first, then calls this.
///
/// # Safety
/// Vulkan's rules for `vkCreateInstance`, called by the loader with its chain info.
pub unsafe fn create_instance(
    create_info: &vk::InstanceCreateInfo<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_instance: *mut vk::Instance,
) -> vk::Result {
    // SAFETY: the loader passes a valid create info with its chain.
    let Some(next) = (unsafe { chain::take_instance_link(create_info) }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: the next layer's GIPA with a null instance resolves global commands.
    let Some(create) = (unsafe {
        (next.get_instance_proc_addr)(vk::Instance::null(), c"vkCreateInstance".as_ptr())
    }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: the pointer is the next layer's vkCreateInstance.
    let create: vk::PFN_vkCreateInstance = unsafe { std::mem::transmute(create) };
    // VK_EXT_layer_settings is this layer's (the application enables it to configure the
    // layer): the layers and driver beneath get the application's list without it, or the
    // driver refuses an extension it does not have. The settings structure stays chained.
    // SAFETY: the application's extension names are valid NUL-terminated strings.
    let extensions: Vec<*const std::ffi::c_char> = unsafe {
        crate::ffi::slice(
            create_info.pp_enabled_extension_names,
            create_info.enabled_extension_count,
        )
    }
    .iter()
    .copied()
    // SAFETY: as above.
    .filter(|&name| unsafe { std::ffi::CStr::from_ptr(name) } != ash::ext::layer_settings::NAME)
    .collect();
    let mut down = *create_info;
    down.enabled_extension_count = extensions.len() as u32;
    down.pp_enabled_extension_names = extensions.as_ptr();
    // SAFETY: the application's arguments, with the chain advanced for the next layer and
    // this layer's own extension taken out of the list.
    let result = unsafe { create(&down, p_allocator, p_instance) };
    if result != vk::Result::SUCCESS {
        return result;
    }
    // SAFETY: on success the instance is written and live.
    let instance = unsafe { *p_instance };
    // SAFETY: reading the application's optional VkApplicationInfo.
    let api_version = unsafe { create_info.p_application_info.as_ref() }
        .map(|app| app.api_version)
        .filter(|&v| v != 0)
        .unwrap_or(vk::API_VERSION_1_0);
    guarded("vkCreateInstance", || {
        // SAFETY: the application's extension names are valid NUL-terminated strings.
        let has_properties2_ext = unsafe {
            enabled(
                create_info.pp_enabled_extension_names,
                create_info.enabled_extension_count,
                c"VK_KHR_get_physical_device_properties2",
            )
        };
        // SAFETY: a live instance created through the loader; GIPA is the next layer's.
        let (key, dispatch) = unsafe {
            (
                dispatch_key(instance),
                InstanceDispatch::load(
                    next.get_instance_proc_addr,
                    instance,
                    api_version,
                    has_properties2_ext,
                ),
            )
        };
        // SAFETY: the application's optional VkApplicationInfo, valid during this call.
        let application = unsafe { device_outputs::application(create_info.p_application_info) };
        registry::insert_instance(
            key,
            Instance {
                dispatch,
                api_version,
                application,
            },
        );
    });
    result
}

/// # Safety
/// Vulkan's rules for `vkDestroyInstance`.
pub unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    if instance == vk::Instance::null() {
        return;
    }
    // SAFETY: a live instance of this chain.
    let key = unsafe { dispatch_key(instance) };
    let Some(record) = guarded("vkDestroyInstance", || registry::remove_instance(key)).flatten()
    else {
        return;
    };
    // SAFETY: forwarded with the application's arguments.
    unsafe { (record.dispatch.fp_v1_0.destroy_instance)(instance, p_allocator) };
}

/// The device's chain, its record and its tracer (when `config`, the process's, asks for
/// one); the entry's `vkCreateDevice` (`crate::entry::creation`) calls it and then sets up
/// what the process needs.
///
/// # Safety
/// Vulkan's rules for `vkCreateDevice`, called by the loader with its chain info.
pub unsafe fn create_device(
    config: Option<&'static Config>,
    physical_device: vk::PhysicalDevice,
    p_create_info: *const vk::DeviceCreateInfo<'_>,
    p_allocator: *const vk::AllocationCallbacks<'_>,
    p_device: *mut vk::Device,
) -> vk::Result {
    // SAFETY: a live physical device of an instance of this chain.
    let Some(instance) = (unsafe { registry::instance_of(physical_device) }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: the loader passes a valid create info with its chain.
    let Some(create_info) = (unsafe { p_create_info.as_ref() }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: as above.
    let Some(next) = (unsafe { chain::take_device_link(create_info) }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // The next vkCreateDevice comes from the instance, never from GIPA(NULL, ...).
    // SAFETY: the next layer's GIPA with a live instance.
    let Some(create) = (unsafe {
        (next.get_instance_proc_addr)(instance.dispatch.handle, c"vkCreateDevice".as_ptr())
    }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    // SAFETY: the pointer is the next layer's vkCreateDevice.
    let create: vk::PFN_vkCreateDevice = unsafe { std::mem::transmute(create) };

    let tracing = config.is_some_and(|c| c.enabled || c.on_demand);
    let wants = features::Wants {
        force_fence: config.is_some_and(|c| c.force_fence),
        // Every output places submit times (text) or stages (Perfetto) by the paired clocks.
        calibration: config.is_some_and(|c| !c.force_measured_clock),
        statistics: config.is_some_and(|c| c.counters == Counters::Pipeline),
        perf: config.and_then(|c| match &c.counters {
            Counters::Perf(names) => Some(names.as_slice().into()),
            _ => None,
        }),
    };
    let caps = tracing
        .then(|| {
            // SAFETY: the physical device belongs to this instance.
            guarded("vkCreateDevice", || unsafe {
                DeviceCaps::query(&instance.dispatch, physical_device)
            })
        })
        .flatten();
    let mut plan = caps.as_ref().and_then(|caps| {
        guarded("vkCreateDevice", || {
            // SAFETY: the application's create info is valid during this call.
            unsafe {
                features::plan(
                    &instance.dispatch,
                    instance.api_version,
                    physical_device,
                    caps.api_version,
                    create_info,
                    wants,
                )
            }
        })
    });

    let patched = plan.as_ref().is_some_and(DevicePlan::is_patched);
    let info = plan
        .as_mut()
        .map_or(p_create_info.cast(), |p| p.create_info(p_create_info));
    // SAFETY: the application's create info, or the layer's copy of it with one structure
    // prepended and maybe one extension added; both valid for this call.
    let mut result = unsafe { create(physical_device, info, p_allocator, p_device) };
    if result != vk::Result::SUCCESS && patched {
        // The layer's addition must never cost the application its device.
        log::warn!("vkCreateDevice failed with the layer's additions (timeline semaphores, host query reset, calibrated timestamps) ({result}); retrying as the application asked, tracing with fences");
        plan = Some(DevicePlan::fence_only());
        // SAFETY: the application's own arguments.
        result = unsafe { create(physical_device, p_create_info, p_allocator, p_device) };
    }
    if result != vk::Result::SUCCESS {
        return result;
    }
    // SAFETY: on success the device is written and live.
    let device = unsafe { *p_device };
    let registered = guarded("vkCreateDevice", || {
        // SAFETY: a live device created through the loader; GDPA is the next layer's.
        let (key, dispatch) = unsafe {
            (
                dispatch_key(device),
                Arc::new(DeviceDispatch::load(next.get_device_proc_addr, device)),
            )
        };
        // Before the application has the device: its commands' idle way down.
        super::adopt_common_next(&dispatch);
        let mut profiling_lock = None;
        let tracer = match (caps, plan, config) {
            (Some(caps), Some(mut plan), Some(config)) => {
                let index = DEVICE_COUNT.fetch_add(1, Ordering::Relaxed);
                if config.counters == Counters::Pipeline {
                    log::warn!("{}", core_features::said(index, plan.statistics));
                }
                let lock = match &plan.perf {
                    PerfPlan::Chosen { .. } => ProfilingLock::acquire(&dispatch).map(Some),
                    _ => Ok(None),
                };
                if let Some(line) = perf_counters::said(
                    index,
                    &plan.perf,
                    lock.as_ref().map(|_| ()).map_err(|e| *e),
                ) {
                    log::warn!("{line}");
                }
                profiling_lock = lock.ok().flatten();
                if profiling_lock.is_none() {
                    // Said above: no counters without the lock.
                    plan.perf = PerfPlan::NotAsked;
                }
                let options = device_outputs::tracer_options(config);
                let origin = device_outputs::origin(&caps, &instance.application, config);
                let outputs =
                    sink::outputs(device_outputs::output_choice(config), origin, SESSION_HOOKS);
                let backend = Backend::new(
                    Arc::clone(&dispatch),
                    caps,
                    &plan,
                    next.set_device_loader_data,
                );
                match backend.and_then(|b| DeviceTracer::new(index, b, options, outputs)) {
                    Ok(tracer) => {
                        // SAFETY: the application's create info, valid during this call,
                        // for this instance's physical device.
                        unsafe {
                            note_counter_scopes(
                                &tracer,
                                &instance.dispatch,
                                physical_device,
                                create_info,
                            )
                        };
                        Some(tracer)
                    }
                    Err(e) => {
                        log::error!("device {index} is not traced: {e}");
                        None
                    }
                }
            }
            _ => None,
        };
        device_record::insert_device(
            key,
            Arc::new(Device {
                dispatch,
                set_loader_data: next.set_device_loader_data,
                tracer,
                profiling_lock: parking_lot::Mutex::new(profiling_lock),
            }),
        );
    });
    if registered.is_none() {
        // The device's next functions may not have been taken into account.
        super::forget_common_next();
    }
    result
}

/// Whether `name` is among an application's `count` enabled names.
///
/// # Safety
/// `names` must hold `count` NUL-terminated strings (or be null with `count == 0`).
unsafe fn enabled(
    names: *const *const std::ffi::c_char,
    count: u32,
    name: &std::ffi::CStr,
) -> bool {
    if names.is_null() {
        return false;
    }
    // SAFETY: forwarded from the caller.
    unsafe { std::slice::from_raw_parts(names, count as usize) }
        .iter()
        // SAFETY: each entry is a NUL-terminated string.
        .any(|&n| !n.is_null() && unsafe { std::ffi::CStr::from_ptr(n) } == name)
}

/// What a Perfetto session's start and stop do to the devices.
const SESSION_HOOKS: SessionHooks = SessionHooks {
    started: capture_gates::session_started,
    stopped: capture_gates::session_stopped,
    drain: write_every_device,
};

/// Waits (bounded, per device) until every traced device wrote what it submitted so far:
/// a stopping session's last batches. On Perfetto's stop thread, never an application's.
fn write_every_device(timeout: std::time::Duration) {
    for device in device_record::all_devices() {
        if let Some(tracer) = device.tracer.as_ref() {
            tracer.sync(timeout);
        }
    }
}

/// Where the application enabled VK_KHR_performance_query, which of each requested queue
/// family's counters are of command-buffer scope: the layer keeps its own commands clear
/// of a query of them (see `hooks::commands::queries`).
///
/// # Safety
/// `create_info` is the application's valid create info for `physical`, a physical device
/// of `instance`.
unsafe fn note_counter_scopes(
    tracer: &DeviceTracer,
    instance: &InstanceDispatch,
    physical: vk::PhysicalDevice,
    create_info: &vk::DeviceCreateInfo<'_>,
) {
    // SAFETY: the caller's promise: arrays of the lengths the info says.
    let (names, queues) = unsafe {
        (
            super::slice(
                create_info.pp_enabled_extension_names,
                create_info.enabled_extension_count,
            ),
            super::slice(
                create_info.p_queue_create_infos,
                create_info.queue_create_info_count,
            ),
        )
    };
    // SAFETY: NUL-terminated extension names.
    let enabled = names
        .iter()
        .any(|&n| unsafe { std::ffi::CStr::from_ptr(n) } == perf_counters::EXTENSION);
    if !enabled {
        return;
    }
    for q in queues {
        // SAFETY: the caller's promise.
        let scopes = unsafe {
            perf_counters::command_buffer_scopes(instance, physical, q.queue_family_index)
        };
        tracer
            .objects
            .set_counter_scopes(q.queue_family_index, scopes);
    }
}
