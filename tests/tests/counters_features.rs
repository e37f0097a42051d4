//! GPU counters (`GPU_TRACE_COUNTERS`): what the layer asks of the device for pipeline
//! statistics, seen by the fault layer beneath it, with validation beneath both.

use utrace_tests::checks::assert_clean;
use utrace_tests::counter_checks::{counters, NAMES};
use utrace_tests::harness::{Run, TempDir, Workload};
use utrace_tests::workload;

/// Runs `workload` traced with `counters` (unset when `None`), the fault layer saying the
/// 1.0 features that reach the driver; asserts it ran clean and returns that line.
fn features_seen(workload: Workload, counters: Option<&str>, dir: &TempDir) -> (Run, String) {
    assert!(
        utrace_tests::harness::fault_layer_library().is_some(),
        "the fault layer is not built: cargo build -p utrace-fault-layer (or bash scripts/test.sh)"
    );
    let mut workload = workload
        .layers(&[
            "VK_LAYER_utrace",
            "VK_LAYER_UTRACE_fault",
            "VK_LAYER_KHRONOS_validation",
        ])
        .env("GPU_TRACE", "1")
        .env("UTRACE_FAULT_SHOW_FEATURES", "1");
    if let Some(value) = counters {
        workload = workload.env("GPU_TRACE_COUNTERS", value);
    }
    let run = workload.run(dir);
    assert_clean(&run);
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("utrace-fault: vkCreateDevice "))
        .unwrap_or_else(|| panic!("no features line: {}", run.stderr))
        .to_string();
    (run, line)
}

#[test]
fn pipeline_counters_enable_the_statistics_features_beside_the_applications_own() {
    let dir = TempDir::new("counters-features");
    let (run, seen) = features_seen(workload!("basic"), Some("pipeline"), &dir);
    // Lavapipe (22.3 and 25.0) offers pipelineStatisticsQuery but not inheritedQueries; the
    // application's own feature is kept.
    assert_eq!(
        seen,
        "pipelineStatisticsQuery=1 inheritedQueries=0 multiDrawIndirect=1 from=pEnabledFeatures"
    );
    assert!(
        run.stderr.contains(
            "utrace: warning: device 0: GPU counters (pipeline statistics): pipelineStatisticsQuery enabled (no inheritedQueries on this device: no statistics across vkCmdExecuteCommands); counters on the draws, render passes, dispatches, trace-rays and executed secondaries of primary command buffers (a render pass instance suspended across command buffers: each part)"
        ),
        "{}",
        run.stderr
    );
    // The application named its features in a VkPhysicalDeviceFeatures2: set in the
    // layer's copy of it, pEnabledFeatures still null.
    let dir = TempDir::new("counters-features2");
    let (_, seen) = features_seen(
        workload!("basic").arg("--features2", ""),
        Some("pipeline"),
        &dir,
    );
    assert_eq!(
        seen,
        "pipelineStatisticsQuery=1 inheritedQueries=0 multiDrawIndirect=1 from=features2"
    );
}

#[test]
fn without_counters_or_with_a_wrong_value_the_device_is_as_the_application_asked() {
    let dir = TempDir::new("counters-off");
    let (run, seen) = features_seen(workload!("basic"), None, &dir);
    assert_eq!(
        seen,
        "pipelineStatisticsQuery=0 inheritedQueries=0 multiDrawIndirect=1 from=pEnabledFeatures"
    );
    assert!(!run.stderr.contains("GPU_TRACE_COUNTERS"), "{}", run.stderr);
    let dir = TempDir::new("counters-wrong");
    let (run, seen) = features_seen(workload!("basic"), Some("pipe"), &dir);
    assert_eq!(
        seen,
        "pipelineStatisticsQuery=0 inheritedQueries=0 multiDrawIndirect=1 from=pEnabledFeatures"
    );
    assert!(
        run.stderr
            .contains("GPU_TRACE_COUNTERS=\"pipe\" is not a counter set (pipeline, or perf:NAME,...); no counters"),
        "{}",
        run.stderr
    );
}

/// A compute family without graphics gets the compute statistic only, and a transfer-only
/// family none: the AMD shape of the fault layer lists both beside Lavapipe's family, the
/// `compute-queue` scenario runs a dispatch of 15 x 64 invocations on the first and a fill
/// on the second, validation beneath (a statistic the family cannot count, or a query on
/// the transfer family, would be a validation error).
#[test]
fn a_compute_family_gets_the_compute_statistic_only_and_a_transfer_family_none() {
    let dir = TempDir::new("counters-compute-family");
    let workload = workload!("compute-queue").env("UTRACE_SHAPE", "amd");
    let (run, _) = features_seen(workload, Some("pipeline"), &dir);
    // The shape's ticks are not the host's clock: the trace is read, not matched to the
    // submissions' CPU windows (tests/hardware_shapes.rs checks the same run's times).
    let trace = utrace_tests::trace_txt::parse_trace(&run.stdout).expect("a txt trace");
    assert_eq!(
        trace.batches.len(),
        1,
        "only the compute queue's: {}",
        run.stdout
    );
    let events = &trace.batches[0].events;
    let ends: Vec<_> = events
        .iter()
        .filter(|e| e.name == "end_dispatch" || e.name == "end_cmd_buffer")
        .collect();
    assert_eq!(ends.len(), 2, "{}", run.stdout);
    for end in ends {
        let shown: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|n| end.arg(n).is_some())
            .collect();
        assert_eq!(shown, ["compute_invocations"], "{end:?}");
        assert_eq!(counters(end).map(|c| c[6]), Some(960), "{end:?}");
    }
}
