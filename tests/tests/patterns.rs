//! Submission patterns of real applications, each validation-clean with the exact event
//! counts and every timestamp inside its submission's CPU window (assert_trace_matches).

use utrace_tests::checks::{assert_clean, assert_trace_matches, assert_transfer_batches, named};
use utrace_tests::harness::{Run, TempDir, SYNC_VALIDATION};
use utrace_tests::trace_txt::Trace;
use utrace_tests::workload;

/// Runs `scenario` traced to stdout with (synchronization) validation beneath.
fn traced(scenario: &str, frames: u32) -> (Run, Trace) {
    let dir = TempDir::new(scenario);
    let run = workload!(scenario)
        .arg("--frames", &frames.to_string())
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("VK_LAYER_ENABLES", SYNC_VALIDATION)
        .run(&dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&run.stdout, &run);
    (run, trace)
}

#[test]
fn a_reusable_command_buffer_resubmitted_for_1000_frames() {
    let (run, trace) = traced("resubmit", 1000);
    assert_eq!(run.report().devices[0].submissions.len(), 1000);
    assert_eq!(trace.batches.len(), 1000);
    assert_transfer_batches(&trace);
    // Every submission has its own timestamps, later than the previous submission's.
    for w in trace.batches.windows(2) {
        assert!(w[1].events[0].ns > w[0].events[5].ns);
    }
    assert_eq!(trace.ends[0].events, 6000);
    assert_eq!(trace.ends[0].dropped, 0);
}

#[test]
fn a_batch_left_waiting_for_a_signal_at_exit_is_counted_not_waited_for() {
    let dir = TempDir::new("unsignalled-exit");
    let file = dir.path().join("trace.txt");
    let run = workload!("unsignalled-at-exit")
        .arg("--exit-without-destroy", "")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("VK_LAYER_ENABLES", SYNC_VALIDATION)
        .run(&dir);
    assert_clean(&run);
    let text = std::fs::read_to_string(&file).unwrap();
    let trace = utrace_tests::checks::parse(&text);
    assert!(trace.batches.is_empty(), "{text}");
    assert_eq!(trace.ends.len(), 1, "the trace is closed: {text}");
    assert_eq!(
        trace.ends[0].dropped, 6,
        "the batch's events are counted lost"
    );
    assert!(
        run.stderr
            .contains("submitted without a fence or semaphore"),
        "{}",
        run.stderr
    );
    // Not the 2 s a batch that may still complete is given at exit: from the report
    // (written just before `exit`) to the process's end, the exit handlers take tens of
    // ms, which a machine twice as slow and busy makes a few hundred at most.
    let exit_ms = (run.ended_boot_ns - run.report().leaving_boot_ns) / 1_000_000;
    assert!(exit_ms < 1_900, "the exit took {exit_ms} ms");
}

#[test]
fn a_simultaneous_use_command_buffer_pending_twice() {
    let (_, trace) = traced("simultaneous", 1);
    assert_eq!(trace.batches.len(), 2);
    assert_transfer_batches(&trace);
    let (first, second) = (&trace.batches[0], &trace.batches[1]);
    assert_eq!(first.events[0].arg("usage"), Some("simultaneous_use"));
    assert!(
        second.events[0].ns >= first.events[5].ns,
        "the second execution's own timestamps, after the first's"
    );
}

#[test]
fn pools_and_command_buffers_reset_freed_trimmed_destroyed_right_after_the_wait() {
    let (run, trace) = traced("reset-after-wait", 1);
    let labels: Vec<&str> = run.report().devices[0]
        .submissions
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "reset-command-buffer",
            "after-reset",
            "reset-pool",
            "free-and-trim",
            "destroy-pool"
        ]
    );
    assert_eq!(trace.batches.len(), 5);
    assert_transfer_batches(&trace);
    assert_eq!(trace.ends[0].dropped, 0);
}

#[test]
fn eight_threads_recording_and_submitting() {
    let (run, trace) = traced("threads", 1);
    // 8 x 16 submissions from the recording threads, then one of all eight threads'
    // command buffers from the main thread.
    assert_eq!(run.report().devices[0].submissions.len(), 8 * 16 + 1);
    assert_eq!(trace.batches.len(), 8 * 16 + 1);
    assert_eq!(trace.batches.last().map(|b| b.cmdbufs), Some(8));
    assert_transfer_batches(&trace);
}

#[test]
fn submissions_without_command_buffers_and_with_timeline_semaphores() {
    let (_, trace) = traced("odd-submits", 1);
    // Calls 1 (fence only), 2 (a semaphore only) and 5 (vkQueueSubmit2, fence only) carry
    // no command buffers: counted, not traced.
    let submissions: Vec<u64> = trace.batches.iter().map(|b| b.submission).collect();
    assert_eq!(submissions, [3, 4, 6]);
    let cmdbufs: Vec<u32> = trace.batches.iter().map(|b| b.cmdbufs).collect();
    assert_eq!(
        cmdbufs,
        [1, 2, 1],
        "two batches of one call are one traced batch"
    );
    assert_transfer_batches(&trace);
}

#[test]
fn multiview_takes_one_query_per_view() {
    let (_, trace) = traced("multiview", 1);
    let b = &trace.batches[0];
    assert_eq!(
        named(b, "start_render_pass")[0].arg("view_mask"),
        Some("0x3")
    );
    let names: Vec<&str> = b.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "start_cmd_buffer",
            "start_render_pass",
            "start_draw",
            "end_draw",
            "end_render_pass",
            "end_cmd_buffer"
        ]
    );
    // Four timestamps outside the render pass, two inside it with two views each.
    assert_eq!(b.queries, 4 + 2 * 2);
}

#[test]
fn secondaries_reused_across_primaries_and_submissions() {
    let (run, trace) = traced("secondary-reuse", 1);
    let subs = &run.report().devices[0].submissions;
    assert_eq!(trace.batches.len(), 4);
    // The reusable secondary, from two primaries and in a resubmitted primary: its events
    // in every batch, inside the primary's execute_commands range, with fresh timestamps.
    for (b, s) in trace.batches[..3].iter().zip(subs) {
        let secondaries: Vec<_> = named(b, "start_cmd_buffer")
            .into_iter()
            .filter(|e| e.arg("level") == Some("secondary"))
            .collect();
        assert_eq!(secondaries.len(), 1, "{}", s.label);
        assert_eq!(secondaries[0].arg("cmd"), Some(s.secondaries[0].as_str()));
        assert_eq!(secondaries[0].depth, 2);
        assert_eq!(named(b, "start_fill_buffer")[0].depth, 3);
    }
    let fills: Vec<u64> = trace.batches[..3]
        .iter()
        .map(|b| named(b, "start_fill_buffer")[0].ns)
        .collect();
    assert!(fills[0] < fills[1] && fills[1] < fills[2], "{fills:?}");
    // A simultaneous-use secondary executed twice in one render pass instance cannot be
    // timed within the rules (no re-arm point between its two runs): it writes nothing,
    // the primary writes nothing inside that subpass, validation stays silent.
    let twice = &trace.batches[3];
    let names: Vec<&str> = twice.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "start_cmd_buffer",
            "start_render_pass",
            "end_render_pass",
            "end_cmd_buffer"
        ]
    );
}

#[test]
fn a_command_buffer_run_twice_by_one_call_gets_two_sets_of_timestamps() {
    let (_, trace) = traced("twice-in-one-submit", 1);
    assert_eq!(trace.batches.len(), 3);
    assert_transfer_batches(&trace);
    for b in &trace.batches {
        assert_eq!(b.cmdbufs, 2);
        let starts = named(b, "start_cmd_buffer");
        let ends = named(b, "end_cmd_buffer");
        assert_eq!(
            starts[0].arg("cmd"),
            starts[1].arg("cmd"),
            "the same command buffer"
        );
        assert!(
            starts[1].ns >= ends[0].ns,
            "the second run's own timestamps, after the first's"
        );
        assert_eq!(
            b.queries, 12,
            "each run's timestamps copied before the next re-arms them"
        );
    }
}

#[test]
fn work_queued_behind_a_host_signal_never_blocks_a_submission() {
    // One batch waits on a timeline value the host signals only after 400 more submissions
    // returned: none of them may wait for it (the workload's watchdog signals after 10 s and
    // fails the run if one did), and every batch is written once the host released them.
    let (run, trace) = traced("wait-before-signal", 0);
    assert_eq!(run.report().devices[0].submissions.len(), 401);
    assert_eq!(trace.batches.len(), 401);
    assert_eq!(trace.ends.len(), 1);
    assert_eq!(trace.ends[0].dropped, 0);
}

#[test]
fn tracepoints_and_submissions_allocate_nothing_in_the_steady_state() {
    // The debug layer counts its allocations per thread; the scenario records a one-time
    // command buffer of 1,000 traced fills, submits it, waits, submits a reusable one twice
    // (waiting for each; the second time with long work in flight), waits again until the
    // traceq thread wrote the batches and a frame's time more, 67 times, and reports what
    // the layer allocated on its thread during the last 62.
    // With run slots (the default: resubmissions read the last run from its slot) and
    // without (`UTRACE_DEBUG_NO_RUN_SLOTS=1`: on Lavapipe they have the GPU save it).
    allocate_nothing(true);
    allocate_nothing(false);
}

fn allocate_nothing(slots: bool) {
    let dir = TempDir::new("allocations");
    let file = dir.path().join("trace.txt");
    let run = workload!("allocations")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("UTRACE_LOG", "debug")
        .env("UTRACE_DEBUG_NO_RUN_SLOTS", if slots { "0" } else { "1" })
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("utrace-allocations: "))
        .unwrap_or_else(|| panic!("no allocation count: {}", run.stderr));
    let counts: std::collections::HashMap<&str, u64> = line
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k, v.parse().expect("a count")))
        .collect();
    assert_eq!(counts["rounds"], 62, "{line}");
    assert_eq!(counts["tracepoints"], 0, "62,000 traced commands: {line}");
    // Submissions: nothing (the channel to the traceq thread keeps its storage).
    assert_eq!(counts["submits"], 0, "62 submissions: {line}");
    // A reusable command buffer submitted again: nothing either (its copy runs again as
    // recorded; the lists its segments are built into are kept).
    assert_eq!(counts["resubmits"], 0, "62 resubmissions: {line}");
    // Submitted again as soon as its last run completed, before traceq read it, with long
    // work in flight: the resubmission has the GPU save that run (on Lavapipe; elsewhere it
    // reads it itself into lists it keeps), with command buffers the queue keeps and the
    // copy held in the trace's list of early runs (the queue's count says how many of its
    // runs went that way: saves, here).
    assert_eq!(counts["back_to_back"], 0, "62 resubmissions: {line}");
    // Six command buffers in one submission: more than a batch holds inline, its lists
    // on the heap, recycled.
    assert_eq!(counts["wide"], 0, "62 submissions of six: {line}");
    let taken: u64 = run
        .stderr
        .lines()
        .filter(|l| l.contains("needed no command buffer of the layer's"))
        .map(|l| {
            // "... (R reusable runs read at their resubmission, S saved by the GPU at it)"
            let inside = l.rsplit('(').next().unwrap_or_default();
            let numbers: Vec<u64> = inside
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|w| w.parse().ok())
                .collect();
            numbers.iter().sum::<u64>()
        })
        .sum();
    let saved = run
        .stderr
        .lines()
        .any(|l| l.contains("needed no command buffer") && !l.contains(", 0 saved by the GPU"));
    assert!(
        taken > 0 && saved != slots,
        "slots {slots}: no run was read (slots) or saved (none) at its resubmission: {}",
        run.stderr
    );
    // Begin and end: nothing (a re-recorded command buffer's frozen trace reuses the last
    // one's allocation once no batch holds it).
    assert_eq!(counts["begin_end"], 0, "{line}");
    // And everything was traced.
    let trace = utrace_tests::checks::parse(&std::fs::read_to_string(&file).unwrap());
    assert_eq!(trace.batches.len(), 5 * 67);
    for round in trace.batches.chunks(5) {
        assert_eq!(
            round[0].events.len(),
            2 * 1000 + 2,
            "the one-time command buffer"
        );
        for again in &round[1..4] {
            assert_eq!(
                again.events.len(),
                2 + 2,
                "the reusable ones, one fill each"
            );
        }
        assert_eq!(
            round[4].events.len(),
            6 * (2 + 2),
            "six reusable ones, together"
        );
    }
}
