//! The minimum a layer needs: interface negotiation, the chain at instance and device
//! creation, and `vkGet*ProcAddr` that hand out this layer's hooks where it has them.

use std::collections::HashMap;
use std::ffi::{c_char, CStr};
use std::sync::{Arc, LazyLock};

use ash::vk;
use ash_layer::{LayerFunction, NegotiateLayerInterface, NegotiateLayerStructType};
use parking_lot::RwLock;

use crate::faults;
use crate::hooks;
use crate::shape::gpu_pass::DeviceShape;
use crate::shape::{self, physical};

/// The next layer's proc-addr functions, by dispatch key.
static INSTANCES: LazyLock<RwLock<HashMap<usize, (vk::PFN_vkGetInstanceProcAddr, vk::Instance)>>> =
    LazyLock::new(Default::default);
static DEVICES: LazyLock<RwLock<HashMap<usize, Next>>> = LazyLock::new(Default::default);
/// The objects of the shape's GPU side, by device dispatch key (with `UTRACE_SHAPE`).
static SHAPES: LazyLock<RwLock<HashMap<usize, Arc<DeviceShape>>>> = LazyLock::new(Default::default);

/// A device's next layer: its GDPA and, resolved at creation, the commands this layer hooks.
struct Next {
    gdpa: vk::PFN_vkGetDeviceProcAddr,
    fns: HashMap<&'static CStr, vk::PFN_vkVoidFunction>,
}

/// # Safety
/// `handle` must be a live dispatchable object.
pub unsafe fn key<H: vk::Handle>(handle: H) -> usize {
    // SAFETY: dispatchable objects start with the loader's dispatch table pointer.
    unsafe { *(handle.as_raw() as usize as *const usize) }
}

/// The next layer's function `name` for the device owning `handle` (one of
/// [`hooks::COMMANDS`]).
///
/// # Safety
/// `handle` must be a live dispatchable object of a device of this chain.
pub unsafe fn next_device_fn<H: vk::Handle>(handle: H, name: &CStr) -> vk::PFN_vkVoidFunction {
    let devices = DEVICES.read();
    // SAFETY: forwarded from the caller.
    let next = devices.get(&unsafe { key(handle) })?;
    next.fns.get(name).copied().flatten()
}

/// The next layer's instance-level function `name`, for a physical device of this chain.
///
/// # Safety
/// `physical` must be a live physical device of an instance of this chain.
pub unsafe fn next_instance_fn(
    physical: vk::PhysicalDevice,
    name: &CStr,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: forwarded from the caller.
    let k = unsafe { key(physical) };
    if let Some(&found) = INSTANCE_FNS.read().get(&k).and_then(|fns| fns.get(name)) {
        return found;
    }
    let (next, instance) = *INSTANCES.read().get(&k)?;
    // SAFETY: the next layer's GIPA on a live instance.
    unsafe { next(instance, name.as_ptr()) }
}

/// The instance-level commands the shape and the performance query emulation call down,
/// resolved as the instance is made: once it is, the loader (1.3.239) answers a layer's
/// `vkGetInstanceProcAddr` from the chain's top, which is this layer itself when it is the
/// only one, and calling that would call itself.
const INSTANCE_COMMANDS: &[&CStr] = &[
    c"vkGetPhysicalDeviceProperties",
    c"vkGetPhysicalDeviceProperties2",
    c"vkGetPhysicalDeviceQueueFamilyProperties",
    c"vkGetPhysicalDeviceQueueFamilyProperties2",
    c"vkEnumerateDeviceExtensionProperties",
    c"vkGetPhysicalDeviceSurfaceSupportKHR",
    c"vkGetPhysicalDeviceFeatures",
    c"vkGetPhysicalDeviceFeatures2",
    c"vkGetPhysicalDeviceMemoryProperties",
];

/// Per instance (key), the next layer's [`INSTANCE_COMMANDS`], resolved at
/// `vkCreateInstance`.
type InstanceFns = HashMap<&'static CStr, vk::PFN_vkVoidFunction>;
static INSTANCE_FNS: LazyLock<RwLock<HashMap<usize, InstanceFns>>> =
    LazyLock::new(Default::default);

/// The shape's objects of the device owning `handle`.
///
/// # Safety
/// `handle` must be a live dispatchable object.
pub unsafe fn shape_device<H: vk::Handle>(handle: H) -> Option<Arc<DeviceShape>> {
    // SAFETY: forwarded from the caller.
    SHAPES.read().get(&unsafe { key(handle) }).cloned()
}

/// Writes the shape's log and frees its objects (the application made the device idle),
/// then destroys the device.
pub unsafe extern "system" fn destroy_device(
    device: vk::Device,
    alloc: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live device of this chain, idle as vkDestroyDevice requires.
    unsafe {
        let k = key(device);
        if let Some(objects) = SHAPES.write().remove(&k) {
            shape::write_log(&objects.logged());
            objects.destroy();
        }
        let next = next_device_fn(device, c"vkDestroyDevice");
        DEVICES.write().remove(&k);
        if let Some(f) = next {
            let f: vk::PFN_vkDestroyDevice = std::mem::transmute(f);
            f(device, alloc);
        }
    }
}

unsafe extern "system" fn negotiate(p: *mut NegotiateLayerInterface) -> vk::Result {
    // SAFETY: the loader passes a valid structure.
    let Some(n) = (unsafe { p.as_mut() }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    if n.s_type != NegotiateLayerStructType::INTERFACE_STRUCT
        || n.loader_layer_interface_version < 2
    {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    n.loader_layer_interface_version = 2;
    n.pfn_get_instance_proc_addr = Some(gipa);
    n.pfn_get_device_proc_addr = Some(gdpa);
    n.pfn_get_physical_device_proc_addr = None;
    vk::Result::SUCCESS
}

unsafe extern "system" fn create_instance(
    info: *const vk::InstanceCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Instance,
) -> vk::Result {
    // SAFETY: the loader's create info and chain, advanced before calling down.
    unsafe {
        let Some(link) = ash_layer::get_instance_chain_info(&*info, LayerFunction::LAYER_LINK_INFO)
        else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let link = link.as_ptr();
        let layer = (*link).u.p_layer_info;
        let Some(next_gipa) = (*layer).pfn_next_get_instance_proc_addr else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        (*link).u.p_layer_info = (*layer).p_next;
        let Some(create) = next_gipa(vk::Instance::null(), c"vkCreateInstance".as_ptr()) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let create: vk::PFN_vkCreateInstance = std::mem::transmute(create);
        let r = create(info, alloc, out);
        if r == vk::Result::SUCCESS {
            INSTANCES.write().insert(key(*out), (next_gipa, *out));
            let fns = INSTANCE_COMMANDS
                .iter()
                .map(|&name| (name, next_gipa(*out, name.as_ptr())))
                .collect();
            INSTANCE_FNS.write().insert(key(*out), fns);
        }
        r
    }
}

unsafe extern "system" fn create_device(
    physical: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Device,
) -> vk::Result {
    // SAFETY: the loader's create info and chain, advanced before calling down; the next
    // vkCreateDevice comes from the instance the physical device belongs to.
    unsafe {
        let Some((_, instance)) = INSTANCES.read().get(&key(physical)).copied() else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let Some(link) = ash_layer::get_device_chain_info(&*info, LayerFunction::LAYER_LINK_INFO)
        else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let link = link.as_ptr();
        let layer = (*link).u.p_layer_info;
        let (Some(next_gipa), Some(next_gdpa)) = (
            (*layer).pfn_next_get_instance_proc_addr,
            (*layer).pfn_next_get_device_proc_addr,
        ) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        (*link).u.p_layer_info = (*layer).p_next;
        let Some(create) = next_gipa(instance, c"vkCreateDevice".as_ptr()) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let create: vk::PFN_vkCreateDevice = std::mem::transmute(create);
        // The shape's GPU side pushes its descriptors.
        let mut shaped = *info;
        let mut extensions: Vec<*const c_char> = if shaped.pp_enabled_extension_names.is_null() {
            Vec::new()
        } else {
            std::slice::from_raw_parts(
                shaped.pp_enabled_extension_names,
                shaped.enabled_extension_count as usize,
            )
            .to_vec()
        };
        let push = c"VK_KHR_push_descriptor";
        if let Some(s) = shape::shape() {
            // The counter is placed now: it wraps a set time into the device's work.
            let _ = s.offset();
        }
        if shape::shape().is_some() && !extensions.iter().any(|&e| CStr::from_ptr(e) == push) {
            extensions.push(push.as_ptr());
            shaped.enabled_extension_count = extensions.len() as u32;
            shaped.pp_enabled_extension_names = extensions.as_ptr();
        }
        // The AMD shape's extra families are the driver's.
        let queues = shape::extra_families::driver_queues(&shaped);
        if let Some(queues) = &queues {
            shaped.queue_create_info_count = queues.len() as u32;
            shaped.p_queue_create_infos = queues.as_ptr();
        }
        // The emulated VK_KHR_performance_query stays above the driver.
        let unlinked = crate::perf_query::enabled()
            .then(|| crate::perf_query::strip(&mut shaped, &mut extensions));
        let hidden =
            crate::perf_inherited::enabled().then(|| crate::perf_inherited::hide(&mut shaped));
        if faults::show_features() {
            show_features(&shaped);
        }
        let r = create(physical, &shaped, alloc, out);
        if let Some(unlinked) = unlinked {
            unlinked.restore();
        }
        if let Some(hidden) = hidden {
            hidden.restore();
        }
        if r == vk::Result::SUCCESS && shape::shape().is_some() {
            let mut memory = vk::PhysicalDeviceMemoryProperties::default();
            if let Some(f) = next_gipa(instance, c"vkGetPhysicalDeviceMemoryProperties".as_ptr()) {
                let f: vk::PFN_vkGetPhysicalDeviceMemoryProperties = std::mem::transmute(f);
                f(physical, &mut memory);
            }
            match DeviceShape::create(*out, next_gdpa, &memory) {
                Ok(objects) => {
                    SHAPES.write().insert(key(*out), Arc::new(objects));
                }
                Err(e) => {
                    eprintln!("utrace-shape: the shape's GPU side could not be made ({e}); the device is not created");
                    if let Some(f) = next_gdpa(*out, c"vkDestroyDevice".as_ptr()) {
                        let f: vk::PFN_vkDestroyDevice = std::mem::transmute(f);
                        f(*out, alloc);
                    }
                    return vk::Result::ERROR_INITIALIZATION_FAILED;
                }
            }
        }
        if r == vk::Result::SUCCESS {
            let fns = hooks::COMMANDS
                .iter()
                .chain(shape::queue_hooks::COMMANDS)
                .chain(crate::perf_pools::COMMANDS)
                .map(|&name| (name, next_gdpa(*out, name.as_ptr())))
                .collect();
            DEVICES.write().insert(
                key(*out),
                Next {
                    gdpa: next_gdpa,
                    fns,
                },
            );
        }
        r
    }
}

unsafe extern "system" fn gipa(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: Vulkan passes a NUL-terminated name.
    let n = unsafe { CStr::from_ptr(name) };
    match n.to_bytes() {
        b"vkGetInstanceProcAddr" => return hook!(gipa),
        b"vkCreateInstance" => return hook!(create_instance),
        b"vkCreateDevice" => return hook!(create_device),
        b"vkGetDeviceProcAddr" => return hook!(gdpa),
        _ => {}
    }
    if let found @ Some(_) = physical::lookup(n) {
        return found;
    }
    if instance == vk::Instance::null() {
        return None;
    }
    // SAFETY: a live instance of this chain.
    let (next, _) = *INSTANCES.read().get(&unsafe { key(instance) })?;
    // SAFETY: the next layer's GIPA.
    unsafe { next(instance, name) }
}

unsafe extern "system" fn gdpa(device: vk::Device, name: *const c_char) -> vk::PFN_vkVoidFunction {
    // SAFETY: Vulkan passes a NUL-terminated name and a live device of this chain.
    let (n, next) = unsafe { (CStr::from_ptr(name), DEVICES.read().get(&key(device))?.gdpa) };
    // SAFETY: the next layer's GDPA.
    let down = unsafe { next(device, name) };
    if let found @ Some(_) = crate::perf_query::device_lookup(n) {
        return found;
    }
    if crate::perf_query::enabled() {
        if let found @ Some(_) = crate::perf_pools::lookup(n) {
            return found;
        }
    }
    if crate::inherited_checks::enabled() {
        if let found @ Some(_) = crate::inherited_checks::lookup(n) {
            return found;
        }
    }
    down?;
    if n.to_bytes() == b"vkGetDeviceProcAddr" {
        return hook!(gdpa);
    }
    hooks::lookup(n).or(down)
}

/// # Safety
/// Called by the loader.
#[no_mangle]
pub unsafe extern "system" fn vkNegotiateLoaderLayerInterfaceVersion(
    p: *mut NegotiateLayerInterface,
) -> vk::Result {
    // SAFETY: forwarded.
    unsafe { negotiate(p) }
}

/// # Safety
/// Called by the loader.
#[no_mangle]
pub unsafe extern "system" fn vkGetInstanceProcAddr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: forwarded.
    unsafe { gipa(instance, name) }
}

/// # Safety
/// Called by the loader.
#[no_mangle]
pub unsafe extern "system" fn vkGetDeviceProcAddr(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: forwarded.
    unsafe { gdpa(device, name) }
}

/// Says which 1.0 features the create info asks for, and where it names them.
///
/// # Safety
/// `info` is a valid `VkDeviceCreateInfo`.
unsafe fn show_features(info: &vk::DeviceCreateInfo<'_>) {
    // SAFETY: the caller's valid create info and chain.
    let found = unsafe {
        if let Some(f) = info.p_enabled_features.as_ref() {
            Some((*f, "pEnabledFeatures"))
        } else {
            let mut next = info.p_next.cast::<vk::BaseInStructure>();
            let mut found = None;
            while !next.is_null() {
                if (*next).s_type == vk::StructureType::PHYSICAL_DEVICE_FEATURES_2 {
                    found = Some((
                        (*next.cast::<vk::PhysicalDeviceFeatures2>()).features,
                        "features2",
                    ));
                    break;
                }
                next = (*next).p_next;
            }
            found
        }
    };
    let (f, from) = found.unwrap_or((vk::PhysicalDeviceFeatures::default(), "none"));
    eprintln!(
        "utrace-fault: vkCreateDevice pipelineStatisticsQuery={} inheritedQueries={} multiDrawIndirect={} from={from}",
        f.pipeline_statistics_query, f.inherited_queries, f.multi_draw_indirect
    );
}
