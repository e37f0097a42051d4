//! What the driver sees of a traced submission (the fault layer beneath utrace shows each
//! submit call's batches, command buffers and signals): a resubmission or a one-time
//! submission gains only a signal, a resubmission with work in flight on Lavapipe gains the
//! layer's copy of its last run, and submissions without a fence leave their signal to a
//! later one. Each validation-clean, with every timestamp inside its submission's CPU
//! window.

use utrace_tests::checks::{assert_clean, assert_trace_matches, assert_transfer_batches};
use utrace_tests::harness::{Run, TempDir, Workload, SYNC_VALIDATION};
use utrace_tests::workload;

/// Runs `workload` traced, with the fault layer beneath utrace saying what each submit call
/// holds, under synchronization validation; asserts it ran clean.
fn submits_shown(workload: Workload, dir: &TempDir) -> Run {
    submits_shown_on(workload, dir, "")
}

/// [`submits_shown`] with Lavapipe presented as a GPU (`UTRACE_DEVICE_TYPE=gpu` of the
/// fault layer): a resubmission then reads its last run on the host when traceq has not,
/// as on a real GPU, where on Lavapipe's CPU device type the layer has the GPU copy it.
fn submits_shown_on_a_gpu(workload: Workload, dir: &TempDir) -> Run {
    submits_shown_on(workload, dir, "gpu")
}

fn submits_shown_on(workload: Workload, dir: &TempDir, device_type: &str) -> Run {
    assert!(
        utrace_tests::harness::fault_layer_library().is_some(),
        "the fault layer is not built: cargo build -p utrace-fault-layer (or bash scripts/test.sh)"
    );
    let run = workload
        .layers(&[
            "VK_LAYER_utrace",
            "VK_LAYER_UTRACE_fault",
            "VK_LAYER_KHRONOS_validation",
        ])
        .env("GPU_TRACE", "1")
        .env("UTRACE_FAULT_SHOW_SUBMITS", "1")
        .env("UTRACE_DEVICE_TYPE", device_type)
        .env("VK_LAYER_ENABLES", SYNC_VALIDATION)
        .run(dir);
    assert_clean(&run);
    run
}

/// Per submit call the driver saw: (batches, command buffers, semaphore signals).
fn submits_seen(run: &Run) -> Vec<(u32, u32, u32)> {
    run.stderr
        .lines()
        .filter_map(|l| l.strip_prefix("utrace-fault: vkQueueSubmit"))
        .map(|l| {
            let num = |key: &str| {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix(key))
                    .and_then(|v| v.parse().ok())
                    .expect("a count")
            };
            (num("batches="), num("command_buffers="), num("signals="))
        })
        .collect()
}

#[test]
fn a_resubmitted_command_buffer_gains_only_a_signal() {
    let dir = TempDir::new("resubmit-cost");
    // Frames 5 ms apart: time for the traceq thread to read each run and reset its queries
    // (on a GPU: on Lavapipe traceq leaves the run 2 ms longer for a resubmission to save).
    let run = submits_shown_on_a_gpu(
        workload!("resubmit")
            .arg("--frames", "20")
            .arg("--pace-ms", "5"),
        &dir,
    );
    let trace = assert_trace_matches(&run.stdout, &run);
    assert_eq!(trace.batches.len(), 20);
    assert_transfer_batches(&trace);
    // With host query reset (Lavapipe has it) the queries are handed out reset, and traceq
    // resets them on the host once it read a run: every run, the first included, is the
    // application's batch and an empty one signalling the queue's timeline (the
    // application's fence: it synchronises). No copy, no re-arm: one-time command
    // buffers' cost (a_one_time_command_buffers_submission_gains_only_a_signal).
    let seen = submits_seen(&run);
    assert_eq!(seen.len(), 20, "{}", run.stderr);
    assert!(seen.iter().all(|&s| s == (2, 1, 1)), "{seen:?}");
    // Nothing of the layer's is recorded: the application's one recording (21 before the
    // layer kept its copy command buffers, 2 to 10 since, 1 now).
    let begun = run
        .stderr
        .lines()
        .filter(|l| *l == "utrace-fault: vkBeginCommandBuffer")
        .count();
    assert_eq!(begun, 1, "recordings in 20 frames");
    // Fresh timestamps every run: the host reset after each read re-armed the queries.
    for w in trace.batches.windows(2) {
        assert!(w[1].events[0].ns > w[0].events[5].ns);
    }
}

#[test]
fn a_one_time_command_buffers_submission_gains_only_a_signal() {
    let dir = TempDir::new("one-time-cost");
    let run = submits_shown_on_a_gpu(workload!("basic"), &dir);
    let trace = assert_trace_matches(&run.stdout, &run);
    assert!(!trace.batches.is_empty());
    // The one-time command buffer's queries were reset on the host and are read from them:
    // no command buffer of the layer's, only an empty batch that signals the timeline. The
    // reusable one's runs go the same way: its queries are read and reset on the host
    // between runs (by traceq, or by the resubmission when traceq has not yet).
    let seen = submits_seen(&run);
    assert_eq!(seen, [(2, 1, 1); 4], "{}", run.stderr);
}

#[test]
fn on_lavapipe_a_resubmission_with_work_in_flight_gains_the_layers_copy() {
    // resubmit-busy resubmits its command buffer as soon as each run's fence signals, with
    // long work still on the GPU: before traceq read the last run. On Lavapipe (whose query
    // reads wait for the whole device) the resubmission then has the GPU save that run:
    // one more batch, before the application's, with the layer's copy command buffer.
    // Nothing else changes. (With run slots, the default, the resubmission reads the run
    // from its slot instead and adds nothing: every submission keeps its shape.)
    let dir = TempDir::new("save-cost");
    let without_slots = workload!("resubmit-busy").env("UTRACE_DEBUG_NO_RUN_SLOTS", "1");
    let run = submits_shown(without_slots, &dir);
    let trace = assert_trace_matches(&run.stdout, &run);
    assert_eq!(trace.batches.len(), 5);
    let seen = submits_seen(&run);
    assert_eq!(seen.len(), 5, "{}", run.stderr);
    assert!(
        seen.iter().all(|&s| s == (2, 1, 1) || s == (3, 2, 1)) && seen.contains(&(3, 2, 1)),
        "{seen:?}"
    );
    let dir = TempDir::new("slot-cost");
    let run = submits_shown(workload!("resubmit-busy"), &dir);
    let trace = assert_trace_matches(&run.stdout, &run);
    assert_eq!(trace.batches.len(), 5);
    let seen = submits_seen(&run);
    assert!(seen.iter().all(|&s| s == (2, 1, 1)), "{seen:?}");
}

#[test]
fn submissions_without_a_fence_leave_their_signal_to_a_later_one() {
    let dir = TempDir::new("unsignalled");
    let run = submits_shown(workload!("unsignalled"), &dir);
    // Every batch timed, in order, inside its submission's window (which ends at the wait
    // that covered it).
    let trace = assert_trace_matches(&run.stdout, &run);
    assert_eq!(trace.batches.len(), 21 + 3 + 2 + 2);
    assert_transfer_batches(&trace);
    assert_eq!(trace.ends[0].dropped, 0);
    // What reached the driver, in order: a submission with its batch alone (`.`) or with the
    // layer's signalling batch (`S`), and the layer's host signals (`H<value>`).
    let calls: String = run
        .stderr
        .lines()
        .filter_map(|l| {
            if let Some(v) = l.strip_prefix("utrace-fault: vkSignalSemaphore value=") {
                Some(format!("H{v}"))
            } else if l.starts_with("utrace-fault: vkQueueSubmit") {
                Some(if l.contains("signals=1") { "S" } else { "." }.to_string())
            } else {
                None
            }
        })
        .collect();
    // The burst: 15 wait for a signal, the 16th gives it (value 1); four more wait, and the
    // fenced one signals value 2. Three batches then wait until vkQueueWaitIdle, after
    // which the host signals 3; two until vkDeviceWaitIdle (4); two until a submission of
    // nothing but a fence, which carries the layer's signal.
    let burst = format!("{}S....S", ".".repeat(15));
    assert_eq!(calls, format!("{burst}...H3..H4..S"), "{}", run.stderr);
}
