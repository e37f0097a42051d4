//! The trace format of utrace, defined once for the layer that writes traces and the
//! `utrace` command that reads, converts and writes them again. Nothing here knows Vulkan.
//!
//! - [`spec_types`]: the kinds of the tracepoint spec that live on at run time (a
//!   tracepoint's range kind, its stage category, its arguments' value kinds);
//! - [`Format`]: the formats a trace is written in;
//! - [`escape`]: how text is quoted in the txt, csv and json formats;
//! - [`text_args`]: an event's arguments as the txt and csv formats write them, read back;
//! - `perfetto` (feature `perfetto`): the Perfetto messages the command decodes and writes.
//!
//! The tests crate keeps its own strict readers on purpose, so that neither side checks
//! itself.

pub mod escape;
mod formats;
#[cfg(feature = "perfetto")]
pub mod perfetto;
pub mod spec_types;
pub mod text_args;

pub use formats::{Format, CSV_HEADER, CSV_HEADER_COUNTERS};

/// The `extra_data` entry, last on each Perfetto render stage, that carries the frame of
/// the stage's batch (the text formats' `frame=N`; Perfetto's `GpuRenderStageEvent` has no
/// field for it). Not one of the range's arguments: readers take it as the batch's frame.
pub const PERFETTO_FRAME_EXTRA: &str = "frame";
pub use spec_types::{Category, RangeKind, ValueKind};

/// The pipeline statistics a range may carry (`GPU_TRACE_COUNTERS=pipeline`), as arguments
/// of its end event (the text formats) or `extra_data` of its stage (Perfetto), in this
/// order: Vulkan's statistics in snake case (the order a query writes them in). The last
/// two, task and mesh shader invocations, only where the device counts them
/// (`meshShaderQueries`).
pub const COUNTER_NAMES: [&str; 9] = [
    "input_vertices",
    "input_primitives",
    "vertex_invocations",
    "clipping_invocations",
    "clipping_primitives",
    "fragment_invocations",
    "compute_invocations",
    "task_invocations",
    "mesh_invocations",
];
