//! `utrace-bench`: what the layer costs the application, measured in one process per mode
//! (the layer reads its configuration once per process) as an A/B between devices with and
//! without it, with the A/A noise floor beside it; and how fast its traceq thread writes.

pub mod ab;
pub mod arena;
pub mod convert;
pub mod rows;
pub mod rows_submits;
pub mod side;
pub mod stats;
pub mod table;
pub mod throughput;
pub mod throughput_kinds;
pub mod throughput_table;

use side::UTRACE_LAYER;

/// A configuration of the layer, set through the environment of a child process.
pub struct Mode {
    pub name: &'static str,
    pub label: &'static str,
    /// The layer side B enables.
    pub layer: &'static str,
    /// B writes a timestamp pair around every draw, as A does by hand in the hand-timed row:
    /// that row's B - A is then the layer's own share of a traced draw.
    pub traces_draws: bool,
    /// Variables, `{dir}` replaced by the run's directory.
    pub vars: &'static [(&'static str, &'static str)],
}

/// Every draw and dispatch tracepoint off: command buffers and render passes remain.
const NO_DRAWS: &str = "-draw,-draw_indexed,-draw_indirect,-draw_indirect_count,-draw_multi,-draw_mesh_tasks,-dispatch,-dispatch_indirect";

/// The Mesa overlay layer Debian ships (mesa-vulkan-drivers), measured as another layer
/// that times command buffers on the GPU.
pub const OVERLAY_LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/libVkLayer_MESA_overlay.so";
pub const OVERLAY_LAYER: &str = "VK_LAYER_MESA_overlay";

pub const MODES: [Mode; 7] = [
    Mode {
        name: "disabled",
        label: "UTRACE_DISABLE=1",
        layer: UTRACE_LAYER,
        traces_draws: false,
        vars: &[("UTRACE_DISABLE", "1")],
    },
    Mode {
        name: "idle",
        label: "loaded, idle (on demand)",
        layer: UTRACE_LAYER,
        traces_draws: false,
        vars: &[],
    },
    Mode {
        name: "cb_rp",
        label: "cmd buffers + passes",
        layer: UTRACE_LAYER,
        traces_draws: false,
        vars: &[
            ("GPU_TRACEFILE", "{dir}/cb_rp.txt"),
            ("GPU_TRACEPOINTS", NO_DRAWS),
        ],
    },
    Mode {
        name: "every_draw",
        label: "every draw (txt)",
        layer: UTRACE_LAYER,
        traces_draws: true,
        vars: &[("GPU_TRACEFILE", "{dir}/all.txt")],
    },
    // As `every_draw`, with pipeline statistics on each render pass and dispatch.
    Mode {
        name: "counters",
        label: "every draw + counters",
        layer: UTRACE_LAYER,
        traces_draws: true,
        vars: &[
            ("GPU_TRACEFILE", "{dir}/counters.txt"),
            ("GPU_TRACE_COUNTERS", "pipeline"),
        ],
    },
    Mode {
        name: "perfetto",
        label: "every draw (Perfetto)",
        layer: UTRACE_LAYER,
        traces_draws: true,
        vars: &[("GPU_TRACEFILE", "{dir}/all.pftrace")],
    },
    Mode {
        name: "overlay",
        label: "Mesa overlay, GPU timing",
        layer: OVERLAY_LAYER,
        traces_draws: false,
        vars: &[("VK_LAYER_MESA_OVERLAY_CONFIG", "no_display,gpu_timing")],
    },
];

impl Mode {
    pub fn named(name: &str) -> Option<&'static Mode> {
        MODES.iter().find(|m| m.name == name)
    }
}

/// The manifest of the Mesa overlay layer, as Debian's
/// (`/usr/share/vulkan/explicit_layer.d/VkLayer_MESA_overlay.json`) with the library's full
/// path, for the benchmark's layer directory.
pub fn overlay_manifest() -> String {
    format!(
        r#"{{
    "file_format_version": "1.0.0",
    "layer": {{
        "name": "{OVERLAY_LAYER}",
        "type": "GLOBAL",
        "library_path": "{OVERLAY_LIBRARY}",
        "api_version": "1.3.211",
        "implementation_version": "1",
        "description": "Mesa Overlay layer"
    }}
}}
"#
    )
}

/// The rows, in table order: (key, label).
pub const ROWS: [(&str, &str); 15] = [
    ("draws", "vkCmdDraw"),
    ("timed_draws", "vkCmdDraw / hand-timed"),
    ("passes", "render pass of 1 draw"),
    ("dispatches", "vkCmdDispatch"),
    ("small_submits", "small vkQueueSubmit"),
    ("timed_submits", "small submit / hand-timed"),
    ("recorded_submits", "resubmit recorded cb"),
    ("paced_resubmits", "resubmit, 3 ms apart"),
    ("stream_passes", "stream of 100 cbs, pass"),
    ("resubmit_one", "resubmit one cb, pass"),
    ("watched_resubmit", "  vs watched signal"),
    ("simultaneous", "simultaneous-use, pass"),
    ("secondaries", "one-time + secondary"),
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
