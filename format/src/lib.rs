//! The trace format of utrace, defined once for the layer that writes traces and the
//! `utrace` command that reads, converts and writes them again. Nothing here knows Vulkan.
//!
//! - [`spec_types`]: the kinds of the tracepoint spec that live on at run time (a
//!   tracepoint's range kind, its stage category, its arguments' value kinds);
//! - [`Format`]: the formats a trace is written in;
//! - [`escape`]: how text is quoted in the txt, csv and json formats;
//! - [`text_args`]: an event's arguments as the txt and csv formats write them, read back;
//! - [`header`]: the header that says where a device's part of a trace comes from;
//! - `perfetto` (feature `perfetto`): the Perfetto messages the command decodes and writes.
//!
//! The tests crate keeps its own strict readers on purpose, so that neither side checks
//! itself.

pub mod escape;
mod formats;
pub mod header;
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

/// What a hardware counter's key starts with (`GPU_TRACE_COUNTERS=perf:NAME,...`), so that
/// readers tell it from the range's own arguments and from the pipeline statistics.
pub const PERF_PREFIX: &str = "perf_";

/// A hardware counter's key among a range's arguments (and its csv column): the driver's
/// name in lower case, each run of other characters than letters and digits one `_`,
/// after [`PERF_PREFIX`] ("GPU busy" is `perf_gpu_busy`, "L2 misses" `perf_l2_misses`).
pub fn perf_key(driver_name: &str) -> String {
    let mut key = String::from(PERF_PREFIX);
    let mut gap = false;
    for c in driver_name.chars() {
        if c.is_ascii_alphanumeric() {
            if gap && key.len() > PERF_PREFIX.len() {
                key.push('_');
            }
            gap = false;
            key.push(c.to_ascii_lowercase());
        } else {
            gap = true;
        }
    }
    key
}

#[cfg(test)]
mod perf_key_tests {
    #[test]
    fn a_drivers_name_becomes_a_key_of_lower_case_words() {
        assert_eq!(super::perf_key("GPU busy"), "perf_gpu_busy");
        assert_eq!(super::perf_key("L2 misses"), "perf_l2_misses");
        assert_eq!(
            super::perf_key("  VS Invocations (%) "),
            "perf_vs_invocations"
        );
        assert_eq!(super::perf_key("Draws"), "perf_draws");
    }
}
