//! What the layer leaves behind however the application ends, and what it answers the
//! loader for commands it does not intercept.

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::harness::TempDir;
use utrace_tests::trace_txt::EndOfTrace;
use utrace_tests::workload;

#[test]
fn exit_without_destroying_the_device_leaves_every_batch() {
    let dir = TempDir::new("no-destroy");
    let file = dir.path().join("trace.txt");
    let run = workload!("basic")
        .arg("--exit-without-destroy", "")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&std::fs::read_to_string(&file).unwrap(), &run);
    assert_eq!(
        trace.ends,
        vec![EndOfTrace {
            device: 0,
            batches: 4,
            events: 24,
            dropped: 0
        }],
        "the trace is closed at exit"
    );
}

#[test]
fn proc_addr_answers_follow_the_next_layer() {
    let dir = TempDir::new("proc-addr");
    let without = workload!("basic").run(&dir);
    let with = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE", "1")
        .run(&dir);
    assert!(
        without.success && with.success,
        "{}{}",
        without.stderr,
        with.stderr
    );
    assert!(!without.report().proc_addrs.is_empty());
    // Same NULL-ness for every probed name: the layer's hooks only where the driver has the
    // command (vkQueuePresentKHR and vkCmdDrawMultiEXT are not enabled: NULL both ways).
    assert_eq!(with.report().proc_addrs, without.report().proc_addrs);
    assert_eq!(
        with.report().proc_addrs.get("vkQueuePresentKHR"),
        Some(&false)
    );
    assert_eq!(
        with.report().proc_addrs.get("vkNotACommandAtAll"),
        Some(&false)
    );
    assert_eq!(with.report().proc_addrs.get("vkQueueSubmit"), Some(&true));
}

#[test]
fn destroy_device_with_batches_not_yet_read_writes_them_all() {
    let dir = TempDir::new("in-flight");
    let file = dir.path().join("trace.txt");
    let run = workload!("in-flight")
        .arg("--frames", "200")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&std::fs::read_to_string(&file).unwrap(), &run);
    assert_eq!(trace.batches.len(), 200);
    assert_eq!(trace.ends[0].batches, 200);
    assert_eq!(trace.ends[0].dropped, 0);
}

#[test]
fn a_forked_child_exits_at_once_and_leaves_the_parents_trace_alone() {
    for file in ["trace.pftrace", "trace.txt"] {
        let dir = TempDir::new("fork");
        let path = dir.path().join(file);
        let run = workload!("fork")
            .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
            .env("GPU_TRACEFILE", path.to_str().unwrap())
            .run(&dir);
        // The workload fails the run if its child took more than 10 s to exit.
        assert_clean(&run);
        let took_ms: u64 = run
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("utrace-workload: the forked child exited in "))
            .and_then(|t| t.strip_suffix(" ms"))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{file}: {}", run.stderr));
        // The child exits in tens of ms (a few hundred on a slow, busy machine): it has no
        // threads of the layer's to wait for; what this guards against is a wait for them,
        // which would be the layer's graces of 1-3 s.
        assert!(
            took_ms < 1000,
            "{file}: the child took {took_ms} ms to exit"
        );
        // The parent's two submissions are in its trace, whole, closed once.
        if file.ends_with(".txt") {
            let trace = assert_trace_matches(&std::fs::read_to_string(&path).unwrap(), &run);
            assert_eq!(trace.batches.len(), 2);
            assert_eq!(trace.ends.len(), 1, "the child wrote no end record");
        } else {
            let trace = utrace_tests::perfetto_trace::read(&path);
            assert_eq!(trace.submits.len(), 2, "{file}");
        }
    }
}
