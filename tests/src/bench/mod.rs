//! `utrace-bench`: what the layer costs the application, measured in one process per mode
//! (the layer reads its configuration once per process) as an A/B between devices with and
//! without it, with the A/A noise floor beside it; and how fast its traceq thread writes.

pub mod ab;
pub mod rows;
pub mod side;
pub mod stats;
pub mod throughput;

/// A configuration of the layer, set through the environment of a child process.
pub struct Mode {
    pub name: &'static str,
    pub label: &'static str,
    /// Variables, `{dir}` replaced by the run's directory.
    pub vars: &'static [(&'static str, &'static str)],
}

/// Every draw and dispatch tracepoint off: command buffers and render passes remain.
const NO_DRAWS: &str = "-draw,-draw_indexed,-draw_indirect,-draw_indirect_count,-draw_multi,-draw_mesh_tasks,-dispatch,-dispatch_indirect";

pub const MODES: [Mode; 5] = [
    Mode {
        name: "disabled",
        label: "UTRACE_DISABLE=1",
        vars: &[("UTRACE_DISABLE", "1")],
    },
    Mode {
        name: "idle",
        label: "loaded, idle (on demand)",
        vars: &[],
    },
    Mode {
        name: "cb_rp",
        label: "cmd buffers + passes",
        vars: &[
            ("GPU_TRACEFILE", "{dir}/cb_rp.txt"),
            ("GPU_TRACEPOINTS", NO_DRAWS),
        ],
    },
    Mode {
        name: "every_draw",
        label: "every draw (txt)",
        vars: &[("GPU_TRACEFILE", "{dir}/all.txt")],
    },
    Mode {
        name: "perfetto",
        label: "every draw (Perfetto)",
        vars: &[("GPU_TRACEFILE", "{dir}/all.pftrace")],
    },
];

/// The rows, in table order: (key, label, unit).
pub const ROWS: [(&str, &str); 8] = [
    ("draws", "vkCmdDraw"),
    ("timed_draws", "vkCmdDraw / hand-timed"),
    ("dispatches", "vkCmdDispatch"),
    ("small_submits", "small vkQueueSubmit"),
    ("timed_submits", "small submit / hand-timed"),
    ("recorded_submits", "resubmit recorded cb"),
    ("threads_1", "1 thread, CPU/dispatch"),
    ("threads_8", "8 threads, CPU/dispatch"),
];

/// Formats traceq's throughput is measured for: (name, variables).
pub const FORMATS: [(&str, &[(&str, &str)]); 4] = [
    ("txt", &[("GPU_TRACEFILE", "{dir}/tq.txt")]),
    (
        "json",
        &[
            ("GPU_TRACEFILE", "{dir}/tq.json"),
            ("GPU_TRACE_FORMAT", "json"),
        ],
    ),
    (
        "csv",
        &[
            ("GPU_TRACEFILE", "{dir}/tq.csv"),
            ("GPU_TRACE_FORMAT", "csv"),
        ],
    ),
    ("perfetto", &[("GPU_TRACEFILE", "{dir}/tq.pftrace")]),
];
