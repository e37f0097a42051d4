//! The trace core (u_trace): one [`DeviceTracer`] per `VkDevice` (u_trace_context), one
//! [`record::command_trace::CommandTrace`] per command buffer (u_trace), batches flushed at
//! submit. Its parts: [`record`] (the command buffers' traces), [`submit`] (a submission's
//! batch) and [`traceq`] (the thread that waits for batches and writes their events).
//!
//! The core knows tracepoints and batches; it reaches Vulkan only through the device's
//! backend and the types of [`crate::gpu::interface`], its outputs are given to it
//! ([`sink_interface::Outputs`]), and it never calls hooks.

pub mod args;
pub mod capture_gates;
mod device_life;
mod device_tracer;
pub mod handle_index;
mod health;
pub mod object_names;
pub mod objects;
mod options;
pub mod pipeline_names;
pub mod record;
pub mod remote;
pub mod shader_sets;
pub mod sink_interface;
pub mod submit;
pub mod tracepoint;
pub mod tracepoints;
pub mod traceq;

pub use device_tracer::DeviceTracer;
pub use options::TracerOptions;
