//! The Vulkan plumbing of the workload: instance (with an optional validation messenger),
//! device, buffers, descriptor sets of one buffer, shader modules of the committed SPIR-V,
//! the compute pipeline of `shaders/fill.comp`, and the clock.

mod buffer;
mod buffer_set;
mod device;
mod fill;
mod instance;
pub mod layer_settings;
mod shader;

pub use buffer::Buffer;
pub use buffer_set::BufferSet;
pub use device::{enable_statistics, name_features_in_chain, Device, Extra};
pub use fill::{verify_fill, FillPipeline, FILL_GROUP};
pub use instance::Instance;
pub use shader::{destroy_shader_modules, shader_module, shader_modules, spirv};

use ash::vk;

pub type Result<T> = std::result::Result<T, String>;

/// Turns a Vulkan error into a message naming the call.
pub fn check<T>(r: std::result::Result<T, vk::Result>, what: &str) -> Result<T> {
    r.map_err(|e| format!("{what} failed: {e}"))
}

pub const VALIDATION_LAYER: &str = "VK_LAYER_KHRONOS_validation";

/// `clock` in nanoseconds (`Instant` reads CLOCK_MONOTONIC too but hides the value).
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer and an existing clock.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in nanoseconds (Lavapipe's device timestamps use the same clock).
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_BOOTTIME in nanoseconds (Perfetto's trace clock).
pub fn boottime_ns() -> u64 {
    clock_ns(libc::CLOCK_BOOTTIME)
}
