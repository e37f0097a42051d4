//! One one-time and one reusable command buffer (submitted three times), traced to a file,
//! to stdout, under validation, and through the fence fallback.

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::harness::{TempDir, SYNC_VALIDATION};
use utrace_tests::trace_txt::EndOfTrace;
use utrace_tests::workload;

/// The trace of `basic`, checked against the workload's report.
fn check_basic_trace(text: &str, run: &utrace_tests::harness::Run) {
    assert_clean(run);
    let trace = assert_trace_matches(text, run);
    for (k, b) in trace.batches.iter().enumerate() {
        assert_eq!(b.submission, k as u64 + 1);
        assert_eq!(b.device, 0);
        // When the call began, on the events' clock (its place is checked against the
        // workload's account by `assert_trace_matches`).
        assert!(
            b.submitted.is_some(),
            "batch {} has no submit time",
            b.number
        );
        let usage = b.events[0].arg("usage");
        assert_eq!(usage, Some(if k == 0 { "one_time_submit" } else { "none" }));
        // The work inside: one dispatch and one fill, each a range of its own.
        let names: Vec<&str> = b.events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "start_cmd_buffer",
                "start_dispatch",
                "end_dispatch",
                "start_fill_buffer",
                "end_fill_buffer",
                "end_cmd_buffer"
            ]
        );
        let fill = &b.events[3];
        assert_eq!(fill.arg("size"), Some("whole"), "VK_WHOLE_SIZE");
        assert_eq!(b.events[1].arg("group_count_x"), Some("64"));
    }
    // The reusable command buffer: three distinct, increasing sets of timestamps.
    let starts: Vec<u64> = trace.batches[1..].iter().map(|b| b.events[0].ns).collect();
    let ends: Vec<u64> = trace.batches[1..].iter().map(|b| b.events[5].ns).collect();
    assert!(
        ends[0] < starts[1] && ends[1] < starts[2],
        "{starts:?} {ends:?}"
    );
    assert_eq!(
        trace.ends,
        vec![EndOfTrace {
            device: 0,
            batches: 4,
            events: 24,
            dropped: 0
        }]
    );
}

#[test]
fn basic_trace_to_file() {
    let dir = TempDir::new("basic-file");
    let file = dir.path().join("trace.txt");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(&dir);
    assert!(run.stdout.is_empty(), "nothing on stdout: {}", run.stdout);
    let text = std::fs::read_to_string(&file).expect("the trace file");
    check_basic_trace(&text, &run);
}

#[test]
fn basic_trace_to_stdout() {
    let dir = TempDir::new("basic-stdout");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE", "1")
        .run(&dir);
    check_basic_trace(&run.stdout, &run);
}

#[test]
fn basic_under_validation_is_silent() {
    let dir = TempDir::new("basic-validation");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("VK_LAYER_ENABLES", SYNC_VALIDATION)
        .run(&dir);
    check_basic_trace(&run.stdout, &run);
}

#[test]
fn fence_fallback_gives_the_same_trace() {
    let dir = TempDir::new("basic-fence");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("UTRACE_FORCE_FENCE", "1")
        .env("UTRACE_LOG", "info")
        .env("VK_LAYER_ENABLES", SYNC_VALIDATION)
        .run(&dir);
    assert!(run.stderr.contains("completion by fence"), "{}", run.stderr);
    assert!(
        run.stderr.contains("queries reset on the GPU"),
        "{}",
        run.stderr
    );
    check_basic_trace(&run.stdout, &run);
}

#[test]
fn one_time_command_buffers_are_read_from_queries_reset_on_the_host() {
    // The workload enables Vulkan 1.2 features through VkPhysicalDeviceVulkan12Features
    // without hostQueryReset: the layer sets it in its copy of that structure (validation
    // beneath sees a valid chain), resets chunks on the host, and submits the one-time
    // command buffer with no command buffer of its own; its timestamps are read from the
    // queries. The trace is the same.
    let dir = TempDir::new("basic-host-reset");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("UTRACE_LOG", "info")
        .env("VK_LAYER_ENABLES", SYNC_VALIDATION)
        .run(&dir);
    assert!(
        run.stderr
            .contains("completion by timeline semaphore, queries reset on the host"),
        "{}",
        run.stderr
    );
    check_basic_trace(&run.stdout, &run);
}
