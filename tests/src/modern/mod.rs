//! Scenarios of the GPU work modern renderers spend their frames on, for Lavapipe 25.0
//! (Vulkan 1.4): ray tracing with acceleration-structure builds, mesh shading, shader
//! objects, device-generated commands, and Vulkan 1.4 / maintenance5-8 commands the layer
//! does not trace. Each creates its own device with the extensions and features it needs,
//! checks its result on the host and logs its submissions through the [`Submitter`]. Here
//! too: the dispatch to them, and what they share (the device-extension checks, debug
//! names).

mod conditional_rendering;
mod dgc_ext;
mod generated_commands;
mod maintenance;
mod mesh;
mod perf_query;
mod raytracing;
mod render_target;
mod shader_objects;

use std::ffi::CStr;

use crate::submitter::Submitter;
use crate::vk::{Device, Instance, Result};

/// The scenarios of this module.
pub const SCENARIOS: &[&str] = &[
    "raytracing",
    "mesh",
    "shader_objects",
    "generated_commands",
    "maintenance",
    "conditional_rendering",
    "perf_query",
];

/// Instance extensions these scenarios use (object names, labels).
pub const INSTANCE_EXTENSIONS: &[&CStr] = &[ash::ext::debug_utils::NAME];

pub fn is_scenario(name: &str) -> bool {
    SCENARIOS.contains(&name)
}

/// The device scenario `name` needs, or a message naming what the driver lacks.
pub fn device(name: &str, inst: &Instance) -> Result<Device> {
    match name {
        "raytracing" => raytracing::device(inst),
        "mesh" => mesh::device(inst),
        "shader_objects" => shader_objects::device(inst),
        "generated_commands" => generated_commands::device(inst),
        "maintenance" => maintenance::device(inst),
        "conditional_rendering" => conditional_rendering::device(inst),
        "perf_query" => perf_query::device(inst),
        other => Err(format!("unknown scenario {other:?}")),
    }
}

/// The workload's run of scenario `opts.scenario`: an instance with `opts.layers`, the
/// scenario's device, its work, its report.
pub fn run_workload(opts: &crate::workload::Options) -> Result<crate::report::Report> {
    let inst = Instance::new(&opts.layers, INSTANCE_EXTENSIONS)?;
    let dev = device(&opts.scenario, &inst)?;
    let mut sub = Submitter::new(&dev)?;
    let results_ok = run(&opts.scenario, &inst, &dev, &mut sub)?;
    let mut report = crate::report::Report {
        // SAFETY: gettid has no preconditions.
        main_thread: unsafe { libc::gettid() } as u32,
        ..Default::default()
    };
    report.devices.push(crate::report::DeviceReport {
        index: 0,
        results_ok,
        submissions: sub.destroy(),
        ..Default::default()
    });
    report.threads = crate::report::thread_names();
    let messages = std::sync::Arc::clone(&inst.messages);
    dev.destroy();
    inst.destroy();
    report.validation_messages = messages.lock().map(|m| m.clone()).unwrap_or_default();
    Ok(report)
}

/// Runs scenario `name` on a device made by [`device`]; whether its results were right.
pub fn run(name: &str, inst: &Instance, dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let ok = match name {
        "raytracing" => raytracing::run(inst, dev, sub)?,
        "mesh" => mesh::run(inst, dev, sub)?,
        "shader_objects" => shader_objects::run(inst, dev, sub)?,
        "generated_commands" => generated_commands::run(inst, dev, sub)?,
        "maintenance" => maintenance::run(inst, dev, sub)?,
        "conditional_rendering" => conditional_rendering::run(inst, dev, sub)?,
        "perf_query" => perf_query::run(inst, dev, sub)?,
        other => return Err(format!("unknown scenario {other:?}")),
    };
    // SAFETY: a live device; every submission was waited for, this only settles the queue.
    unsafe { dev.device.device_wait_idle() }.map_err(|e| e.to_string())?;
    Ok(ok)
}

/// The device extensions `physical` offers.
pub fn offered_extensions(
    inst: &Instance,
    physical: ash::vk::PhysicalDevice,
) -> Result<Vec<ash::vk::ExtensionProperties>> {
    // SAFETY: a live physical device of this instance.
    crate::vk::check(
        unsafe {
            inst.instance
                .enumerate_device_extension_properties(physical)
        },
        "vkEnumerateDeviceExtensionProperties",
    )
}

/// Whether `name` is among the `offered` extensions.
pub fn offers(offered: &[ash::vk::ExtensionProperties], name: &CStr) -> bool {
    offered
        .iter()
        .any(|e| e.extension_name_as_c_str() == Ok(name))
}

/// An error naming the first of `names` the device does not offer (the scenarios ask before
/// chaining an extension's feature structure into a query).
pub fn require_extensions(
    inst: &Instance,
    physical: ash::vk::PhysicalDevice,
    names: &[&CStr],
) -> Result<()> {
    let offered = offered_extensions(inst, physical)?;
    match names.iter().find(|n| !offers(&offered, n)) {
        Some(n) => Err(format!("the device lacks {}", n.to_string_lossy())),
        None => Ok(()),
    }
}

/// Gives `object` a debug name (`vkSetDebugUtilsObjectNameEXT`), as engines name their
/// pipelines and shaders: the layer reports draws by these names.
pub fn name_object<H: ash::vk::Handle>(
    inst: &Instance,
    dev: &Device,
    object: H,
    name: &CStr,
) -> Result<()> {
    let utils = ash::ext::debug_utils::Device::new(&inst.instance, &dev.device);
    let info = ash::vk::DebugUtilsObjectNameInfoEXT::default()
        .object_handle(object)
        .object_name(name);
    // SAFETY: a live object of this device; the instance enabled VK_EXT_debug_utils.
    crate::vk::check(
        unsafe { utils.set_debug_utils_object_name(&info) },
        "vkSetDebugUtilsObjectNameEXT",
    )
}
