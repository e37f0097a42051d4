//! Faults the driver may produce, injected by `VK_LAYER_UTRACE_fault` beneath utrace
//! (`tests/fault-layer`): the application gets exactly the driver's error, utrace says so
//! once, stops tracing the device, never hangs, and the process ends cleanly.

use std::time::{Duration, Instant};

use utrace_tests::checks::parse;
use utrace_tests::harness::{Run, TempDir};
use utrace_tests::trace_txt::Trace;
use utrace_tests::workload;

/// `basic` with `faults` injected beneath utrace, traced to a file; the run, its trace and
/// how long it took.
fn with_faults(faults: &str) -> (Run, Trace, Duration) {
    assert!(
        utrace_tests::harness::fault_layer_library().is_some(),
        "the fault-injection layer is not built: cargo build -p utrace-fault-layer (or run bash scripts/test.sh)"
    );
    let dir = TempDir::new("faults");
    let file = dir.path().join("trace.txt");
    let started = Instant::now();
    let run = workload!("basic")
        .layers(&[
            "VK_LAYER_utrace",
            "VK_LAYER_UTRACE_fault",
            "VK_LAYER_KHRONOS_validation",
        ])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("UTRACE_FAULTS", faults)
        .run(&dir);
    let took = started.elapsed();
    assert!(
        run.code.is_some(),
        "the process ended by signal {:?}: {}",
        run.signal,
        run.stderr
    );
    let trace = parse(&std::fs::read_to_string(&file).unwrap_or_default());
    (run, trace, took)
}

fn utrace_lines(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|l| l.starts_with("utrace:"))
        .collect()
}

#[test]
fn device_lost_at_submit_reaches_the_application_unchanged() {
    let (run, trace, _) = with_faults("vkQueueSubmit=device_lost@3");
    assert_eq!(run.code, Some(1), "the workload stops at its failed submit");
    assert!(
        run.stderr
            .contains("utrace-workload: vkQueueSubmit failed: The logical device has been lost"),
        "the application saw VK_ERROR_DEVICE_LOST: {}",
        run.stderr
    );
    let said = utrace_lines(&run);
    assert_eq!(said.len(), 1, "{}", run.stderr);
    assert!(
        said[0].contains("tracing stops for device 0"),
        "{}",
        said[0]
    );
    // The two submissions before the loss are in the trace, closed at exit.
    assert_eq!(trace.batches.len(), 2);
    assert_eq!(trace.ends.len(), 1);
}

#[test]
fn device_lost_while_waiting_drops_and_counts_the_batches() {
    let (run, trace, _) = with_faults("vkWaitSemaphores=device_lost");
    assert!(
        run.success,
        "the application's own work is unaffected: {}",
        run.stderr
    );
    assert!(run.report().devices[0].results_ok);
    let said = utrace_lines(&run);
    assert_eq!(said.len(), 1, "{}", run.stderr);
    assert!(
        said[0].contains("device has been lost") && said[0].contains("tracing stops"),
        "{}",
        said[0]
    );
    assert!(trace.batches.is_empty());
    assert_eq!(
        trace.ends[0].dropped,
        4 * 6,
        "every event given up is counted"
    );
}

#[test]
fn a_semaphore_that_never_signals_does_not_hang_the_device() {
    let (run, trace, took) = with_faults("vkWaitSemaphores=timeout");
    assert!(run.success, "{}", run.stderr);
    assert!(run.report().devices[0].results_ok);
    assert!(
        took < Duration::from_secs(20),
        "vkDestroyDevice gave up in bounded time: {took:?}"
    );
    let said = utrace_lines(&run);
    assert_eq!(said.len(), 1, "{}", run.stderr);
    assert!(said[0].contains("did not complete"), "{}", said[0]);
    assert_eq!(trace.ends[0].dropped, 4 * 6);
}

#[test]
fn out_of_memory_for_query_pools_leaves_the_application_alone() {
    let (run, trace, _) = with_faults("vkCreateQueryPool=out_of_device_memory");
    assert!(run.success, "{}", run.stderr);
    assert!(run.report().devices[0].results_ok);
    let said = utrace_lines(&run);
    assert_eq!(said.len(), 1, "one message for the device: {}", run.stderr);
    assert!(
        said[0].contains("creating a timestamp query pool failed")
            && said[0].contains("tracing stops")
    );
    assert!(trace.batches.is_empty());
}

#[test]
fn out_of_memory_for_the_layers_buffers_leaves_the_application_alone() {
    // basic's own allocations come first (two buffers, two memories); the third of each is
    // the layer's readback buffer at the first submission.
    for faults in [
        "vkAllocateMemory=out_of_device_memory@3",
        "vkCreateBuffer=out_of_device_memory@3",
    ] {
        let (run, trace, _) = with_faults(faults);
        assert!(run.success, "{faults}: {}", run.stderr);
        assert!(run.report().devices[0].results_ok, "{faults}");
        let said = utrace_lines(&run);
        assert_eq!(said.len(), 1, "{faults}: {}", run.stderr);
        assert!(
            said[0].contains("tracing stops for device 0"),
            "{}",
            said[0]
        );
        assert!(trace.batches.is_empty(), "{faults}");
        // The first batch went untimed (its queries still re-armed), the rest untraced.
        assert_eq!(trace.ends[0].dropped, 6, "{faults}");
    }
}

#[test]
fn the_layer_does_not_depend_on_get_query_pool_results() {
    // utrace reads timestamps through its own copies on the GPU, never through
    // vkGetQueryPoolResults: a device whose vkGetQueryPoolResults fails traces as usual.
    let (run, trace, _) = with_faults("vkGetQueryPoolResults=device_lost");
    assert!(run.success, "{}", run.stderr);
    assert!(utrace_lines(&run).is_empty(), "{}", run.stderr);
    assert_eq!(trace.batches.len(), 4);
    assert_eq!(trace.ends[0].dropped, 0);
}
