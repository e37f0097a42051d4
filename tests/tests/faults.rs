//! Faults the driver may produce, injected by `VK_LAYER_UTRACE_fault` beneath utrace
//! (`tests/fault-layer`): the application gets exactly the driver's error, utrace says so
//! once, stops tracing the device, never hangs, and the process ends cleanly.

use std::time::Duration;

use utrace_tests::checks::{parse, said};
use utrace_tests::harness::{Run, TempDir};
use utrace_tests::trace_txt::Trace;
use utrace_tests::workload;

/// `basic` with `faults` injected beneath utrace, traced to a file; the run and its trace.
fn with_faults(faults: &str) -> (Run, Trace) {
    scenario_with_faults("basic", faults)
}

/// [`with_faults`] for another of the workload's scenarios.
fn scenario_with_faults(scenario: &str, faults: &str) -> (Run, Trace) {
    scenario_with_faults_env(scenario, faults, &[])
}

/// [`with_faults`] with Lavapipe presented as a GPU (`UTRACE_DEVICE_TYPE=gpu` of the fault
/// layer): a resubmission then reads its last run on the host, as on a real GPU, where on
/// Lavapipe's CPU device type the layer has the GPU copy it (see `recorded_wraps`).
fn with_faults_on_a_gpu(faults: &str) -> (Run, Trace) {
    scenario_with_faults_env("basic", faults, &[("UTRACE_DEVICE_TYPE", "gpu")])
}

/// [`scenario_with_faults`] with more of the environment.
fn scenario_with_faults_env(scenario: &str, faults: &str, vars: &[(&str, &str)]) -> (Run, Trace) {
    assert!(
        utrace_tests::harness::fault_layer_library().is_some(),
        "the fault-injection layer is not built: cargo build -p utrace-fault-layer (or run bash scripts/test.sh)"
    );
    let dir = TempDir::new("faults");
    let file = dir.path().join("trace.txt");
    let mut workload = workload!(scenario)
        .layers(&[
            "VK_LAYER_utrace",
            "VK_LAYER_UTRACE_fault",
            "VK_LAYER_KHRONOS_validation",
        ])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("UTRACE_FAULTS", faults);
    for (k, v) in vars {
        workload = workload.env(k, v);
    }
    let run = workload.run(&dir);
    assert!(
        run.code.is_some(),
        "the process ended by signal {:?}: {}",
        run.signal,
        run.stderr
    );
    let trace = parse(&std::fs::read_to_string(&file).unwrap_or_default());
    (run, trace)
}

#[test]
fn device_lost_at_submit_reaches_the_application_unchanged() {
    let (run, trace) = with_faults("vkQueueSubmit=device_lost@3");
    assert_eq!(run.code, Some(1), "the workload stops at its failed submit");
    assert!(
        run.stderr
            .contains("utrace-workload: vkQueueSubmit failed: The logical device has been lost"),
        "the application saw VK_ERROR_DEVICE_LOST: {}",
        run.stderr
    );
    let said = said(&run);
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
    let (run, trace) = with_faults("vkWaitSemaphores=device_lost");
    assert!(
        run.success,
        "the application's own work is unaffected: {}",
        run.stderr
    );
    assert!(run.report().devices[0].results_ok);
    let said = said(&run);
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
    let (run, trace) = with_faults("vkWaitSemaphores=timeout");
    assert!(run.success, "{}", run.stderr);
    assert!(run.report().devices[0].results_ok);
    // The layer gives a batch that never completes 2 s at vkDestroyDevice, and the
    // traceq thread 8 s in all: the wait is the layer's own, not the machine's.
    let destroy = Duration::from_nanos(run.report().devices[0].destroy_ns);
    assert!(
        destroy < Duration::from_secs(6),
        "vkDestroyDevice gave up in bounded time: {destroy:?}"
    );
    let said = said(&run);
    assert_eq!(said.len(), 1, "{}", run.stderr);
    assert!(said[0].contains("did not complete"), "{}", said[0]);
    assert_eq!(trace.ends[0].dropped, 4 * 6);
}

#[test]
fn out_of_memory_for_query_pools_leaves_the_application_alone() {
    let (run, trace) = with_faults("vkCreateQueryPool=out_of_device_memory");
    assert!(run.success, "{}", run.stderr);
    assert!(run.report().devices[0].results_ok);
    let said = said(&run);
    assert_eq!(said.len(), 1, "one message for the device: {}", run.stderr);
    assert!(
        said[0].contains("creating a timestamp query pool failed")
            && said[0].contains("tracing stops")
    );
    assert!(trace.batches.is_empty());
}

#[test]
fn out_of_memory_for_the_layers_buffers_leaves_the_application_alone() {
    // simultaneous's own allocation comes first (a buffer, its memory); the second of each
    // is the layer's readback buffer at the first submission: a command buffer that may be
    // pending twice has its timestamps copied by the layer.
    for faults in [
        "vkAllocateMemory=out_of_device_memory@2",
        "vkCreateBuffer=out_of_device_memory@2",
    ] {
        let (run, trace) = scenario_with_faults("simultaneous", faults);
        assert!(run.success, "{faults}: {}", run.stderr);
        assert!(run.report().devices[0].results_ok, "{faults}");
        let said = said(&run);
        assert_eq!(said.len(), 1, "{faults}: {}", run.stderr);
        assert!(
            said[0].contains("tracing stops for device 0"),
            "{}",
            said[0]
        );
        assert!(trace.batches.is_empty(), "{faults}");
        // Both runs were instrumented before the fault: they go untimed (their queries
        // still re-armed), and each lost event is counted.
        assert_eq!(trace.ends[0].dropped, 2 * 6, "{faults}");
    }
}

#[test]
fn reading_timestamps_from_their_queries_needs_no_buffer_of_the_layers() {
    // basic submits a one-time command buffer, then a reusable one three times: with host
    // query reset every run is read from its queries (by traceq, or by the resubmission),
    // so on a GPU allocations failing after the application's own (two buffers, two
    // memories) touch nothing of the layer's.
    for faults in [
        "vkAllocateMemory=out_of_device_memory@3",
        "vkCreateBuffer=out_of_device_memory@3",
    ] {
        let (run, trace) = with_faults_on_a_gpu(faults);
        assert!(run.success, "{faults}: {}", run.stderr);
        assert!(said(&run).is_empty(), "{faults}: {}", run.stderr);
        assert_eq!(trace.batches.len(), 4, "{faults}");
        assert_eq!(trace.ends[0].dropped, 0, "{faults}");
    }
}

#[test]
fn on_lavapipe_a_resubmission_whose_copy_of_the_last_run_cannot_be_had_reads_it_instead() {
    // On Lavapipe a resubmission that finds its last run unread with work in flight has
    // the GPU copy it into a buffer of the layer's (resubmit-busy: long work follows each
    // run). When that buffer cannot be had (the third of each allocation, after the
    // workload's two buffers), the run is read on the host instead: said once, nothing
    // lost.
    for faults in [
        "vkAllocateMemory=out_of_device_memory@3",
        "vkCreateBuffer=out_of_device_memory@3",
    ] {
        let (run, trace) = scenario_with_faults("resubmit-busy", faults);
        assert!(run.success, "{faults}: {}", run.stderr);
        assert!(run.report().devices[0].results_ok, "{faults}");
        let said = said(&run);
        assert_eq!(said.len(), 1, "{faults}: {}", run.stderr);
        assert!(
            said[0].contains("warning: the layer's copy of a resubmitted command buffer's last run could not be had"),
            "{}",
            said[0]
        );
        assert_eq!(trace.batches.len(), 5, "{faults}");
        assert_eq!(trace.ends[0].dropped, 0, "{faults}");
    }
}

#[test]
fn a_failing_get_query_pool_results_loses_only_the_batches_read_with_it() {
    // A command buffer's timestamps are read with vkGetQueryPoolResults when they stay in
    // its queries; a command buffer that may be pending twice has them copied by the
    // layer's command buffers on the GPU. simultaneous submits one such twice; basic a
    // one-time command buffer, then a reusable one three times, which copies its own
    // queries into its run slot (read as memory) or, without slots, is read from the
    // queries too (by traceq, or at its resubmission): each failed read says why once.
    let (run, trace) = scenario_with_faults("simultaneous", "vkGetQueryPoolResults=device_lost");
    assert!(run.success, "{}", run.stderr);
    assert!(said(&run).is_empty(), "{}", run.stderr);
    assert_eq!(trace.batches.len(), 2);
    assert_eq!(trace.ends[0].dropped, 0);
    for (slots, kept) in [(true, 3), (false, 0)] {
        let vars = [
            ("UTRACE_DEVICE_TYPE", "gpu"),
            ("UTRACE_DEBUG_NO_RUN_SLOTS", if slots { "0" } else { "1" }),
        ];
        let (run, trace) =
            scenario_with_faults_env("basic", "vkGetQueryPoolResults=device_lost", &vars);
        assert!(run.success, "{}", run.stderr);
        let said = said(&run);
        assert_eq!(said.len(), 1, "slots {slots}: {}", run.stderr);
        assert!(
            said[0].contains("reading a batch's timestamps failed"),
            "{}",
            said[0]
        );
        assert_eq!(trace.batches.len(), kept, "slots {slots}");
        assert_eq!(
            trace.ends[0].dropped,
            (4 - kept as u64) * 6,
            "slots {slots}"
        );
    }
}

/// `basic` traced with the layer's own part named `what` made to panic (debug builds of the
/// layer only: `UTRACE_DEBUG_PANIC`), validation beneath.
fn with_internal_error(what: &str) -> (Run, Trace) {
    let dir = TempDir::new("internal-error");
    let file = dir.path().join("trace.txt");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("UTRACE_DEBUG_PANIC", what)
        .run(&dir);
    utrace_tests::checks::assert_clean(&run);
    let trace = parse(&std::fs::read_to_string(&file).unwrap_or_default());
    (run, trace)
}

/// The only line utrace said.
fn the_one_line(run: &Run) -> &str {
    let said = said(run);
    assert_eq!(said.len(), 1, "{}", run.stderr);
    said[0]
}

#[test]
fn a_panic_in_a_tracepoint_stops_tracing_the_device_and_is_said_once() {
    // Every traced command of basic's first command buffer panics in the layer: each
    // command still reaches the driver (the workload checks the GPU's results), the first
    // panic is said and stops the device's tracing, the others are silent, and command
    // buffers begun later are not instrumented.
    let (run, trace) = with_internal_error("recording a tracepoint");
    assert!(the_one_line(&run).contains(
        "internal error in recording a tracepoint: injected by UTRACE_DEBUG_PANIC; tracing stops for device 0"
    ));
    // The first command buffer was instrumented before the panic: its begin and end are
    // written, its commands' events are not. The reusable one, begun after, is not traced.
    assert_eq!(trace.batches.len(), 1, "{}", run.stdout);
    let names: Vec<&str> = trace.batches[0]
        .events
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["start_cmd_buffer", "end_cmd_buffer"]);
    assert_eq!(trace.ends.len(), 1, "the trace is closed");
}

#[test]
fn a_panic_at_every_begin_is_said_once_and_nothing_is_instrumented() {
    let (run, trace) = with_internal_error("vkBeginCommandBuffer");
    assert!(the_one_line(&run).contains("tracing stops for device 0"));
    // Nothing traced and nothing lost: the trace file is never opened (the one line on
    // stderr says what happened).
    assert!(trace.batches.is_empty());
    assert!(trace.ends.is_empty(), "the file is left alone");
}

#[test]
fn a_submission_the_layer_could_not_wrap_leaves_no_query_written_twice() {
    // The third vkBeginCommandBuffer is the layer's first recording of its own (after the
    // workload's two): the submission it was for goes down as the application made it,
    // untimed, and tracing stops for new recordings. The reusable command buffer in it
    // then runs alone three times more: each run must find its queries reset (the
    // validation layer beneath says otherwise) and is still traced.
    let (run, trace) =
        scenario_with_faults("fallback", "vkBeginCommandBuffer=out_of_host_memory@3");
    utrace_tests::checks::assert_clean(&run);
    let said = said(&run);
    let failed = |l: &str| {
        l.contains("recording the layer's command buffers failed")
            && l.contains("command buffers recorded before are still timed")
    };
    let failures = said.iter().filter(|l| failed(l)).count();
    assert_eq!(failures, 1, "{}", run.stderr);
    // A resubmission has the GPU save its last run (Lavapipe's reads wait for the device),
    // with command buffers that cannot be recorded either: said once, before or after.
    assert!(
        said.iter().filter(|l| !failed(l)).all(|l| l.contains(
            "the layer's copy of a resubmitted command buffer's last run could not be had"
        )),
        "{}",
        run.stderr
    );
    let cmdbufs: Vec<u32> = trace.batches.iter().map(|b| b.cmdbufs).collect();
    assert_eq!(
        cmdbufs,
        [1, 1, 1, 1],
        "alone-first and the three after: {}",
        run.stderr
    );
    assert_eq!(trace.ends[0].dropped, 0);
}

#[test]
fn a_save_still_waited_for_at_shutdown_does_not_outlive_the_device() {
    // Semaphore waits that never succeed after the first: on Lavapipe the busy
    // resubmissions have their last runs saved by the GPU, and traceq, reading a run whose
    // save it cannot see complete, waited for it up to 10 s, past the 8 s vkDestroyDevice
    // gives it; the device then went with the thread still calling into it (a crash in
    // about half the runs, else "the trace thread did not finish"). Whether traceq is in
    // such a wait when the device goes depends on timing: four runs.
    for run_number in 0..4 {
        let (run, _trace) =
            scenario_with_faults("resubmit-busy-many", "vkWaitSemaphores=timeout@2");
        assert_eq!(run.code, Some(0), "run {run_number}: {}", run.stderr);
        assert!(
            !run.stderr.contains("did not finish"),
            "run {run_number}: {}",
            run.stderr
        );
        // Its own grace (2 s) at most, well before the device's limit (8 s), however slow
        // the machine: the time is the layer's waits, not its work.
        let destroy = Duration::from_nanos(run.report().devices[0].destroy_ns);
        assert!(
            destroy < Duration::from_secs(6),
            "run {run_number}: vkDestroyDevice took {destroy:?}"
        );
    }
}
