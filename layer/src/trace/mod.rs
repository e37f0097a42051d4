//! The trace core (u_trace): one [`DeviceTracer`] per `VkDevice` (u_trace_context), one
//! [`command_trace::CommandTrace`] per command buffer (u_trace), batches flushed at submit.
//!
//! The core knows tracepoints and batches; it reaches Vulkan only through the device's
//! backend and the types of [`crate::gpu::interface`], its outputs are given to it
//! ([`sink_interface::Outputs`]), and it never calls hooks.

pub mod args;
pub mod batch;
pub mod bound_pipelines;
pub mod capture_gates;
pub mod chunk;
pub mod cmdbufs;
pub mod command_trace;
mod device_tracer;
pub mod events;
pub mod handle_index;
mod health;
pub mod object_names;
pub mod objects;
mod options;
mod pending_submission;
pub mod pipeline_names;
mod query_slots;
pub mod recorded_trace;
pub mod recorder;
mod recording;
pub mod remote;
mod segment_lists;
pub mod shader_sets;
pub mod sink_interface;
mod submit_flow;
pub mod tracepoint;
pub mod tracepoints;
pub mod traceq;

pub use device_tracer::DeviceTracer;
pub use options::TracerOptions;
