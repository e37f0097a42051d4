//! Scenarios that record every kind of GPU work the layer traces: render passes (classic,
//! two subpasses, dynamic with suspend/resume), every draw, every dispatch, every transfer,
//! labels, and secondaries executed in a render pass. Each checks its own results where it
//! can and logs its submissions through the [`Submitter`].

mod compute;
mod counted;
mod counted_reuse;
pub mod graphics;
mod labels;
pub(crate) mod passes;
mod pipeline;
pub mod scene_target;
mod secondaries;
mod work;

use ash::vk;

use crate::submitter::Submitter;
use crate::vk::{Device, Instance, Result};

/// The scenarios of this module, in the order `all-gpu-work` runs them.
pub const SCENARIOS: &[&str] = &[
    "render-pass",
    "dynamic-rendering",
    "secondaries",
    "compute",
    "transfers",
    "labels",
];

/// Scenarios of this module that `all-gpu-work` leaves out (run on their own).
pub const ALONE: &[&str] = &[
    "counters",
    "counters-own-query",
    "counters-unread",
    "counters-full-screen",
    "counters-indexed",
    "counters-reruns",
    "counters-simultaneous",
];

/// Instance extensions these scenarios use (labels and debug markers).
pub const INSTANCE_EXTENSIONS: &[&std::ffi::CStr] =
    &[ash::ext::debug_utils::NAME, ash::ext::debug_report::NAME];

/// Device extensions these scenarios use where the device has them (multi-draw; debug
/// markers, which Lavapipe has only through the validation layer).
pub const DEVICE_EXTENSIONS: &[&std::ffi::CStr] =
    &[ash::ext::multi_draw::NAME, ash::ext::debug_marker::NAME];

/// Whether `name` is one of this module's scenarios (or `all-gpu-work`).
pub fn is_scenario(name: &str) -> bool {
    name == "all-gpu-work" || SCENARIOS.contains(&name) || ALONE.contains(&name)
}

/// Runs scenario `name` (or all of them); returns whether every result was right. The
/// optional features the scenarios used (see `DeviceReport::features`) go to `features`.
pub fn run(
    name: &str,
    inst: &Instance,
    dev: &Device,
    sub: &mut Submitter,
    features: &mut Vec<String>,
) -> Result<bool> {
    let names: Vec<&str> = if name == "all-gpu-work" {
        SCENARIOS.to_vec()
    } else {
        vec![name]
    };
    let mut ok = true;
    for n in names {
        ok &= match n {
            "render-pass" => passes::render_pass(inst, dev, sub, features)?,
            "dynamic-rendering" => passes::dynamic_rendering(dev, sub)?,
            "secondaries" => secondaries::secondaries(dev, sub)?,
            "compute" => compute::compute(dev, sub)?,
            "transfers" => work::transfers(dev, sub)?,
            "labels" => labels::labels(inst, dev, sub, features)?,
            "counters" => counted::counters(dev, sub)?,
            "counters-own-query" => counted::counters_own_query(dev, sub)?,
            "counters-unread" => counted::counters_unread(dev, sub)?,
            "counters-full-screen" => counted::counters_full_screen(dev, sub)?,
            "counters-indexed" => counted::counters_indexed(dev, sub)?,
            "counters-reruns" => counted::counters_reruns(dev, sub)?,
            "counters-simultaneous" => counted_reuse::counters_simultaneous(dev, sub)?,
            other => return Err(format!("unknown scenario {other:?}")),
        };
    }
    // SAFETY: a live device; every submission was waited for, this only settles the queue.
    unsafe { dev.device.device_wait_idle() }.map_err(|e| e.to_string())?;
    Ok(ok)
}

/// A fresh primary command buffer, begun one-time-submit, recorded by `record`, ended.
fn record_once(
    dev: &Device,
    record: impl FnOnce(vk::CommandBuffer) -> Result<()>,
) -> Result<vk::CommandBuffer> {
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    record(cb)?;
    dev.end(cb)?;
    Ok(cb)
}

/// Frees command buffers whose submissions completed.
fn free(dev: &Device, cbs: &[vk::CommandBuffer]) {
    // SAFETY: every submission of these command buffers was waited for.
    unsafe { dev.device.free_command_buffers(dev.pool, cbs) };
}

/// Notes that an optional feature was used (once, however many scenarios use it).
fn used(features: &mut Vec<String>, name: &str) {
    if !features.iter().any(|f| f == name) {
        features.push(name.to_string());
    }
}

/// Words the compute shader writes.
const WORDS: u32 = 4096;

/// Whether a check passed; a failure is said on stderr.
fn report(r: Result<()>) -> bool {
    r.map_err(|e| eprintln!("utrace-workload: {e}")).is_ok()
}
