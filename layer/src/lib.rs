//! `VK_LAYER_utrace`: GPU timestamps around the work a Vulkan application records.
//!
//! The rooms of the layer (see `docs/design.md`):
//! - [`entry`]: the exported functions (negotiation with the Vulkan loader,
//!   `vkGet*ProcAddr`), `vkCreateDevice`'s process-wide set-up and the process's exit;
//! - [`loader`]: chain walking, dispatch tables and the registry of instances and devices
//!   keyed by dispatch key;
//! - [`hooks`]: the intercepted entry points, grouped by object;
//! - [`trace`]: the trace core (per-device context, per-command-buffer traces, chunks,
//!   batches, and the per-device traceq thread turning completed batches into events); it
//!   knows tracepoints and batches and little Vulkan, and is given its outputs;
//! - [`gpu`]: the Vulkan resources the core needs (query pools, readback buffers, the
//!   layer's own command buffers and semaphores);
//! - [`sink`]: the output formats, which only know events (Perfetto's data source and
//!   sessions among them);
//! - [`config`]: the environment contract and layer settings, read once per process;
//! - [`control`]: the control socket, for captures started from outside the process.
#![warn(unsafe_op_in_unsafe_fn)]
// The loader looks for `libVkLayer_<name>.so`, so the crate keeps the loader's spelling.
#![allow(non_snake_case)]

#[cfg(debug_assertions)]
mod alloc_count;
pub mod config;
pub mod control;
pub mod digits;
pub mod entry;
pub mod ffi;
pub mod gpu;
mod guard;
pub mod hooks;
pub mod loader;
mod logger;
pub mod sink;
pub mod trace;
pub mod vk_ext;

/// The layer's name as the loader and applications know it.
pub const LAYER_NAME: &std::ffi::CStr = c"VK_LAYER_utrace";
/// The package's version and the commit built (`0.1.0 (commit 1a2b3c4d5e6f)`), as
/// `utrace --version` says it (see the `utrace-version` crate).
pub const VERSION: &str = env!("UTRACE_VERSION");
/// Shown by `vkEnumerateInstanceLayerProperties`: the version first.
pub const LAYER_DESCRIPTION: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(
    concat!(
        "utrace ",
        env!("UTRACE_VERSION"),
        ": GPU timestamps of command buffers, as text or Perfetto render stages\0"
    )
    .as_bytes(),
) {
    Ok(description) => description,
    Err(_) => panic!("the description holds no NUL but its last byte"),
};
/// Bumped whenever the layer's observable behaviour changes.
pub const IMPLEMENTATION_VERSION: u32 = 1;
