//! The Vulkan resources the trace core needs, behind a short interface: [`interface`], the
//! one module the core imports ([`backend`]: one device's Vulkan and its operations);
//! - [`calibration`], [`cpu_clock`]: the GPU clock paired with the CPU's (for Perfetto);
//!   [`cpu_ticks`]: submissions stamped in the CPU's counter, placed on its clock later;
//! - [`measured_clock`]: the one-off pairing where the device cannot sample both clocks
//!   (`gated_round`: its tight rounds; `clock_objects`: what it submits; `clock_window`:
//!   what a round gives);
//! - [`caps`]: what the device can time (queue families, timestamp period, memory types);
//! - [`features`]: enabling the timeline semaphores the layer waits on, at `vkCreateDevice`
//!   ([`feature_choice`]: what the application chose, what the device offers);
//! - [`query_pool`]: timestamp query pools, the chunks' storage;
//! - [`readback`]: host-visible buffers the GPU copies a batch's timestamps into;
//!   `run_slots`: the slots tracked command buffers copy their own runs into (`run_slot_ops`:
//!   the backend's side of them);
//! - [`queue_context`]: per-queue resources: the layer's command buffers that re-arm and copy
//!   queries around each submission, and its completion semaphore; [`segments`]: what those
//!   command buffers are recorded from; [`layer_commands`]: what they hold;
//!   [`batch_resources`]: what one submission holds of them; `recorded_wraps`: those kept
//!   recorded for the next equal submission (`recipe`);
//! - [`completion`]: waiting for a batch with a bounded timeout;
//! - [`wrapped_submit`]: the application's submission wrapped with the layer's batches
//!   (`batch_lists`: the lists handed to the next layer, for both kinds of batch);
//!   [`submission`]: the two submit commands as one interface;
//! - [`timestamps`]: a tracepoint's timestamp, written into the application's command buffer.
//!
//! Nothing here blocks without a timeout, and every error comes back as a `vk::Result`.

mod backend;
mod batch_lists;
pub mod batch_resources;
pub mod calibration;
pub mod caps;
pub mod chain_copy;
mod clock_objects;
mod clock_window;
pub mod completion;
pub mod core_features;
pub mod cpu_clock;
pub mod cpu_ticks;
pub mod device_time;
mod feature_choice;
pub mod features;
mod gated_round;
pub mod hardware_plan;
pub mod interface;
mod layer_commands;
pub mod measured_clock;
pub mod mesh_statistics;
pub mod perf_counters;
pub mod perf_queries;
pub mod query_pool;
pub mod queue_context;
pub mod readback;
mod recipe;
mod recorded_wraps;
mod run_slot_ops;
mod run_slots;
pub mod segments;
pub mod statistics_queries;
pub mod submission;
pub mod submission_counts;
mod timeline_signals;
pub mod timestamps;
pub mod wrapped_submit;

use ash::vk;

/// `Ok` for `VK_SUCCESS`, the error otherwise.
pub fn check(result: vk::Result) -> Result<(), vk::Result> {
    match result {
        vk::Result::SUCCESS => Ok(()),
        error => Err(error),
    }
}
