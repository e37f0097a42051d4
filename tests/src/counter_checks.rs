//! Pipeline statistics (`GPU_TRACE_COUNTERS=pipeline`) read back from the layer's txt
//! traces, for the counters tests: each range's values, and a workload traced with them.

use crate::checks::{assert_clean, assert_trace_matches};
use crate::harness::{Run, TempDir, Workload};
use crate::trace_txt::{Event, Trace};

/// The statistics' names in the trace, in order.
pub const NAMES: [&str; 7] = [
    "input_vertices",
    "input_primitives",
    "vertex_invocations",
    "clipping_invocations",
    "clipping_primitives",
    "fragment_invocations",
    "compute_invocations",
];

/// An event's statistics by name (0 for those it does not show), and whether it shows any.
pub fn counters(e: &Event) -> Option<[u64; 7]> {
    let mut values = [0u64; 7];
    let mut any = false;
    for (i, name) in NAMES.iter().enumerate() {
        if let Some(v) = e.arg(name) {
            values[i] = v.parse().unwrap_or_else(|_| panic!("{name}={v:?}"));
            any = true;
        }
    }
    any.then_some(values)
}

/// Runs `workload` traced with pipeline statistics, validation beneath; asserts it ran
/// clean and its trace matches its submissions.
pub fn counted(workload: Workload, dir: &TempDir) -> (Run, Trace) {
    let run = workload
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_COUNTERS", "pipeline")
        .run(dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&run.stdout, &run);
    (run, trace)
}

/// The events named `name` of a batch.
pub fn named<'t>(events: &'t [Event], name: &str) -> Vec<&'t Event> {
    events.iter().filter(|e| e.name == name).collect()
}
