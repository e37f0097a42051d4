//! Hardware counters (`GPU_TRACE_COUNTERS=perf:NAME,...`, VK_KHR_performance_query) at the
//! device's creation (their collection: `counters_hardware`), on the fault layer's emulation of the extension beneath utrace
//! (`UTRACE_PERF_QUERY=1`), validation beneath both: the names resolved, a set needing more
//! than one pass refused with its count, an unknown name refused with the family's list,
//! the profiling lock taken (and given back at vkDestroyDevice), or said when it cannot be.

use utrace_tests::checks::assert_clean;
use utrace_tests::harness::{Run, TempDir};
use utrace_tests::workload;

/// The `basic` scenario traced with `counters`, the emulation on (`emulated`), plus `envs`.
fn traced(counters: &str, emulated: bool, envs: &[(&str, &str)]) -> Run {
    let dir = TempDir::new("counters-perf");
    let mut w = workload!("basic")
        .layers(&[
            "VK_LAYER_utrace",
            "VK_LAYER_UTRACE_fault",
            "VK_LAYER_KHRONOS_validation",
        ])
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_COUNTERS", counters);
    if emulated {
        w = w.env("UTRACE_PERF_QUERY", "1");
    }
    for (k, v) in envs {
        w = w.env(k, v);
    }
    let run = w.run(&dir);
    assert_clean(&run);
    run
}

/// The device's line about hardware counters.
fn line(run: &Run) -> &str {
    run.stderr
        .lines()
        .find(|l| l.contains("GPU counters (VK_KHR_performance_query)"))
        .unwrap_or_else(|| panic!("no line: {}", run.stderr))
}

#[test]
fn counters_of_one_pass_are_resolved_and_the_profiling_lock_taken_then_given_back() {
    let run = traced("perf:draws, Vertices", true, &[]);
    assert_eq!(
        line(&run),
        "utrace: warning: device 0: GPU counters (VK_KHR_performance_query): Draws, Vertices in one pass, the profiling lock taken; counted around each render pass instance (the first 32 of a command buffer, none that suspends) of primary command buffers, not those for simultaneous use"
    );
    let taken = run.stderr.find("utrace-perf: the profiling lock is taken");
    let given = run
        .stderr
        .find("utrace-perf: the profiling lock is given back");
    assert!(taken.is_some() && given > taken, "{}", run.stderr);
}

#[test]
fn a_set_needing_two_passes_is_refused_with_its_count() {
    let run = traced("perf:draws,L2 MISSES", true, &[]);
    assert!(
        line(&run).ends_with("the counters Draws, L2 misses need 2 passes on queue family 0; utrace collects counters in one pass (ask for fewer); no hardware counters"),
        "{}",
        line(&run)
    );
    assert!(!run.stderr.contains("the profiling lock is taken"));
}

#[test]
fn an_unknown_name_is_refused_with_the_familys_counters() {
    let run = traced("perf:Draws,Texels,Tiles", true, &[]);
    assert!(
        line(&run).contains("queue family 0 has no counter \"Texels\", \"Tiles\" (it has: Draws, Vertices, Workgroups, GPU busy, L2 misses; `utrace counters` lists them); no hardware counters"),
        "{}",
        line(&run)
    );
}

#[test]
fn a_driver_without_the_extension_or_a_lock_held_elsewhere_gets_none() {
    let run = traced("perf:Draws", false, &[]);
    assert!(
        line(&run).ends_with("the driver has no VK_KHR_performance_query; no hardware counters"),
        "{}",
        line(&run)
    );
    let run = traced("perf:Draws", true, &[("UTRACE_PERF_LOCK_HELD", "1")]);
    assert!(
        line(&run).ends_with(
            "Draws: the profiling lock is held elsewhere (another process profiling the device; waited 1 s); no hardware counters"
        ),
        "{}",
        line(&run)
    );
}

/// The `perf_query` scenario beneath utrace (the fault layer's emulation between them,
/// validation at the bottom), traced, with `envs` and workload `args`; asserted clean.
fn perf_query_traced(name: &str, envs: &[(&str, &str)], args: &[&str]) -> Run {
    let dir = TempDir::new(name);
    let mut w = workload!("perf_query")
        .layers(&[
            "VK_LAYER_utrace",
            "VK_LAYER_UTRACE_fault",
            "VK_LAYER_KHRONOS_validation",
        ])
        .env("UTRACE_PERF_QUERY", "1")
        .env("GPU_TRACE", "1");
    for a in args {
        w = w.arg(a, "");
    }
    for (k, v) in envs {
        w = w.env(k, v);
    }
    let run = w.run(&dir);
    assert_clean(&run);
    run
}

/// An application that profiles itself with its own performance query of command-buffer
/// scope (the `perf_query` scenario, on the emulation): the query must be its command
/// buffer's first command and its last, which the test layer checks (`utrace-perf: VUID-...`
/// on a breach). utrace keeps its commands clear of it: nothing before the begin, the
/// command buffer's range ended before the end; with the `query` tracepoint on, and with
/// pipeline statistics too (a one-time recording records no reset of its pools). The
/// application's values stay right (2 draws, 12 vertices, 4 workgroups) and the command
/// buffer is traced whole. Without utrace the scenario is clean too.
#[test]
fn an_applications_own_performance_query_stays_its_command_buffers_first_and_last() {
    let alone = {
        let dir = TempDir::new("perf-query-alone");
        workload!("perf_query")
            .layers(&["VK_LAYER_UTRACE_fault", "VK_LAYER_KHRONOS_validation"])
            .env("UTRACE_PERF_QUERY", "1")
            .run(&dir)
    };
    assert_clean(&alone);
    assert!(
        !alone.stderr.contains("utrace-perf: VUID"),
        "{}",
        alone.stderr
    );
    for extra in [
        ("GPU_TRACE", "1"),
        ("GPU_TRACEPOINTS", "+query"),
        ("GPU_TRACE_COUNTERS", "pipeline"),
    ] {
        let run = perf_query_traced("perf-query-traced", &[extra], &[]);
        assert!(
            !run.stderr.contains("utrace-perf: VUID"),
            "{extra:?}: {}",
            run.stderr
        );
        let trace = utrace_tests::checks::assert_trace_matches(&run.stdout, &run);
        let events = &trace.batches[0].events;
        assert_eq!(
            events.first().map(|e| e.name.as_str()),
            Some("start_cmd_buffer")
        );
        assert_eq!(
            events.last().map(|e| e.name.as_str()),
            Some("end_cmd_buffer")
        );
        assert_eq!(
            events.iter().filter(|e| e.name == "end_draw").count(),
            2,
            "{extra:?}: {}",
            run.stdout
        );
    }
}

/// An application that profiles itself holds the profiling lock: `perf:` counters asked of
/// the layer then stand aside (said), and the application's own queries work. Its
/// performance query features chained before its `VkPhysicalDeviceFeatures2`
/// (`--features2`) no longer keep the layer from enabling pipeline statistics.
#[test]
fn beside_an_application_that_profiles_itself() {
    let run = perf_query_traced(
        "perf-query-beside",
        &[("GPU_TRACE_COUNTERS", "perf:Draws,Vertices")],
        &[],
    );
    assert!(
        line(&run).ends_with("the application uses VK_KHR_performance_query itself (the profiling lock is its own); no hardware counters"),
        "{}",
        line(&run)
    );
    let run = perf_query_traced(
        "perf-query-features2",
        &[("GPU_TRACE_COUNTERS", "pipeline")],
        &["--features2"],
    );
    let trace = utrace_tests::checks::assert_trace_matches(&run.stdout, &run);
    let draw = trace.batches[0]
        .events
        .iter()
        .find(|e| e.name == "end_draw")
        .expect("a draw");
    assert_eq!(draw.arg("vertex_invocations"), Some("6"), "{}", run.stderr);
}
