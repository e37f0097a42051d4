//! `GPU_TRACEPOINTS` switches tracepoints over the spec's defaults.

use utrace_tests::checks::{assert_clean, assert_trace_matches, named};
use utrace_tests::harness::TempDir;
use utrace_tests::workload;

#[test]
fn switching_a_tracepoint_off_removes_it_and_its_timestamps_only() {
    let dir = TempDir::new("toggle-off");
    let all = workload!("basic")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .run(&dir);
    let fewer = workload!("basic")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("GPU_TRACEPOINTS", "-dispatch,no_such_thing")
        .run(&dir);
    assert_clean(&all);
    assert_clean(&fewer);
    let all = assert_trace_matches(&all.stdout, &all);
    let fewer_trace = assert_trace_matches(&fewer.stdout, &fewer);
    for (a, f) in all.batches.iter().zip(&fewer_trace.batches) {
        let without: Vec<&str> = a
            .events
            .iter()
            .map(|e| e.name.as_str())
            .filter(|n| !n.ends_with("_dispatch"))
            .collect();
        let names: Vec<&str> = f.events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, without, "everything but the dispatch range");
        assert_eq!(
            f.queries + 2,
            a.queries,
            "the dispatch's two timestamps are gone"
        );
    }
    let unknown: Vec<&str> = fewer
        .stderr
        .lines()
        .filter(|l| l.contains("GPU_TRACEPOINTS"))
        .collect();
    assert_eq!(unknown.len(), 1, "{}", fewer.stderr);
    assert!(unknown[0].contains("no_such_thing"), "{}", unknown[0]);
}

#[test]
fn barriers_are_off_by_default_and_on_by_request() {
    let dir = TempDir::new("toggle-on");
    let run = |tracepoints: Option<&str>| {
        let mut w = workload!("demo")
            .arg("--frames", "1")
            .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
            .env("GPU_TRACE", "1");
        if let Some(t) = tracepoints {
            w = w.env("GPU_TRACEPOINTS", t);
        }
        w.run(&dir)
    };
    let default = run(None);
    assert_clean(&default);
    let trace = assert_trace_matches(&default.stdout, &default);
    assert!(trace
        .batches
        .iter()
        .all(|b| named(b, "start_barrier").is_empty()));

    let on = run(Some("+barrier"));
    assert_clean(&on);
    let trace = assert_trace_matches(&on.stdout, &on);
    // The demo's reusable command buffer orders its update after its copy with a barrier.
    let barriers: Vec<_> = trace
        .batches
        .iter()
        .flat_map(|b| named(b, "start_barrier"))
        .filter(|e| e.arg("image_barriers") == Some("0"))
        .collect();
    assert_eq!(barriers.len(), 1, "{}", on.stdout);
    assert_eq!(
        barriers[0].arg("src_stages"),
        Some("all_transfer"),
        "VK_PIPELINE_STAGE_TRANSFER_BIT is ALL_TRANSFER in sync2 terms"
    );
    assert_eq!(barriers[0].arg("memory_barriers"), Some("1"));
    assert!(
        on.stderr.lines().all(|l| !l.contains("GPU_TRACEPOINTS")),
        "{}",
        on.stderr
    );
}

/// The library of each command the workload was handed, from its `proc-addrs` line.
fn handed_out(run: &utrace_tests::harness::Run) -> Vec<(String, String)> {
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("utrace-proc-addrs: "))
        .unwrap_or_else(|| panic!("no proc-addrs line: {}", run.stderr));
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_command_whose_tracepoints_are_off_is_not_intercepted() {
    let dir = TempDir::new("toggle-hooks");
    let run = |tracepoints: &str| {
        let run = workload!("proc-addrs")
            .layers(&["VK_LAYER_utrace"])
            .env("GPU_TRACE", "1")
            .env("GPU_TRACEPOINTS", tracepoints)
            .run(&dir);
        assert!(run.success, "{}", run.stderr);
        handed_out(&run)
    };
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(k, l)| (k.to_string(), l.to_string()))
            .collect()
    };
    let (layer, driver) = ("libVkLayer_utrace.so", "libvulkan_lvp.so");
    // Every tracepoint on: the layer's hooks.
    assert_eq!(
        run(""),
        pairs(&[
            ("vkCmdDraw", layer),
            ("vkCmdDispatch", layer),
            ("vkCmdFillBuffer", layer),
            ("vkCmdBeginRenderPass", layer),
        ])
    );
    // Draws and dispatches off: the application calls the driver for them; the render
    // pass hook stays (it also tracks the pass for the tracepoints still on).
    assert_eq!(
        run("-draw,-dispatch,-render_pass"),
        pairs(&[
            ("vkCmdDraw", driver),
            ("vkCmdDispatch", driver),
            ("vkCmdFillBuffer", layer),
            ("vkCmdBeginRenderPass", layer),
        ])
    );
}
