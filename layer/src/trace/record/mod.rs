//! The recording side (u_trace): one [`command_trace::CommandTrace`] per command buffer, its
//! tracepoints' timestamps written through a [`recorder::Recorder`] into query chunks taken
//! from the device's [`chunk::ChunkPool`], and kept as a [`recorded_trace::RecordedTrace`]
//! when the command buffer ends.

pub mod bound_pipelines;
pub mod chunk;
pub mod cmdbufs;
pub(super) mod command_pools;
pub mod command_trace;
pub mod counter_values;
pub mod hardware;
mod hardware_runs;
mod order_entry;
mod query_slots;
pub mod recorded_hw;
pub mod recorded_stats;
pub mod recorded_trace;
pub mod recorder;
mod recording;
mod reruns;
pub mod saved_copy;
pub mod statistics;
pub mod statistics_pools;
pub mod submit_order;
