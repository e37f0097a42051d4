//! The core scenarios on Lavapipe 25.0 (Vulkan 1.4) as well as on the system's 22.3: one-time
//! and resubmitted command buffers, secondaries, presented frames, the demo and recording
//! on several threads, each traced with validation beneath and checked against the
//! workload's own account (one batch per submission, every event inside its submission's CPU
//! window, ranges well nested, frames numbered at present).

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::harness::{Run, TempDir, XServer};
use utrace_tests::trace_txt::Trace;
use utrace_tests::workload;

/// Runs `scenario` on Lavapipe 25.0 under the layer, validation beneath, tracing to stdout;
/// on a window of its own X server when `window`.
fn on_25(scenario: &str, window: bool) -> (Run, Trace) {
    let x = window.then(XServer::start);
    let dir = TempDir::new(scenario);
    let mut w = workload!(scenario)
        .on_lavapipe_25()
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1");
    if let Some(x) = &x {
        w = w.env("DISPLAY", &x.display).arg("--frames", "4");
    }
    let run = w.run(&dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&run.stdout, &run);
    assert!(!trace.batches.is_empty(), "{scenario}: traced");
    (run, trace)
}

/// The driver really is 25.0: a command of Vulkan 1.4's extensions resolves on it.
#[test]
fn the_tests_reach_lavapipe_25() {
    let dir = TempDir::new("which-driver");
    let out = std::process::Command::new("vulkaninfo")
        .arg("--summary")
        .env("VK_DRIVER_FILES", utrace_tests::harness::lavapipe_25_icd())
        .env("XDG_RUNTIME_DIR", dir.path())
        .output()
        .expect("vulkaninfo runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("apiVersion         = 1.4"), "{text}");
    assert!(text.contains("Mesa 25.0"), "{text}");
}

#[test]
fn basic() {
    let (run, trace) = on_25("basic", false);
    assert_eq!(
        trace.batches.len(),
        run.report().devices[0].submissions.len()
    );
}

#[test]
fn resubmitted_command_buffers() {
    on_25("resubmit", false);
}

#[test]
fn secondaries() {
    on_25("secondaries", false);
}

#[test]
fn frames() {
    let (run, trace) = on_25("frames", true);
    assert_eq!(run.report().presents, 4);
    let frames: Vec<u32> = trace.batches.iter().map(|b| b.frame).collect();
    assert_eq!(frames, [0, 1, 2, 3]);
}

#[test]
fn demo() {
    let (run, _) = on_25("demo", true);
    assert_eq!(run.report().presents, 4);
}

#[test]
fn threads() {
    on_25("threads", false);
}
