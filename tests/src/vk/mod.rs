//! The Vulkan plumbing of the workload: instance (with an optional validation messenger),
//! device, buffers, the compute pipeline of `shaders/fill.comp`, and the clock.

mod buffer;
mod device;
mod fill;
mod instance;

pub use buffer::Buffer;
pub use device::Device;
pub use fill::{verify_fill, FillPipeline, FILL_GROUP};
pub use instance::Instance;

use ash::vk;

pub type Result<T> = std::result::Result<T, String>;

/// Turns a Vulkan error into a message naming the call.
pub fn check<T>(r: std::result::Result<T, vk::Result>, what: &str) -> Result<T> {
    r.map_err(|e| format!("{what} failed: {e}"))
}

pub const VALIDATION_LAYER: &str = "VK_LAYER_KHRONOS_validation";

/// CLOCK_MONOTONIC in nanoseconds (Lavapipe's device timestamps use the same clock).
pub fn monotonic_ns() -> u64 {
    // `Instant` reads CLOCK_MONOTONIC too but hides the value, so ask libc directly.
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut [i64; 2]) -> i32;
    }
    const CLOCK_MONOTONIC: i32 = 1;
    let mut ts = [0i64; 2];
    // SAFETY: clock_gettime writes a struct timespec (two i64 on x86_64/aarch64 Linux).
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    ts[0] as u64 * 1_000_000_000 + ts[1] as u64
}
