//! Resubmissions with the layer's copy command buffers kept per recording: a resubmission
//! records nothing of the layer's (the queue's count at `UTRACE_LOG=debug` says how each
//! wrapped submission got its command buffers), and the times stay right when the
//! recording changes between submissions, its pool is reset, the command buffer is freed
//! and replaced, and a simultaneous-use one is pending twice.

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::harness::{Run, TempDir, SYNC_VALIDATION};
use utrace_tests::patterns::rerecord::rerecord_events;
use utrace_tests::trace_txt::Trace;
use utrace_tests::workload;

/// How a queue's wrapped submissions got the layer's command buffers.
#[derive(Debug, Default)]
struct WrapCounts {
    recorded: u64,
    by_recipe: u64,
    by_recording: u64,
}

/// The sum of every queue's counts in the layer's debug log.
fn wrap_counts(stderr: &str) -> WrapCounts {
    let mut counts = WrapCounts::default();
    let mut lines = 0;
    for line in stderr
        .lines()
        .filter(|l| l.contains("the layer's command buffers were recorded for"))
    {
        let numbers: Vec<u64> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter(|w| !w.is_empty())
            .map(|w| w.parse().expect("a count"))
            .collect();
        let [.., recorded, by_recipe, by_recording] = numbers[..] else {
            panic!("three counts in {line:?}");
        };
        counts.recorded += recorded;
        counts.by_recipe += by_recipe;
        counts.by_recording += by_recording;
        lines += 1;
    }
    assert!(
        lines > 0,
        "no count of the layer's command buffers:\n{stderr}"
    );
    counts
}

/// Runs `scenario` for `frames`, traced to stdout at `UTRACE_LOG=debug` with
/// synchronization validation beneath; asserts it ran clean and that the trace matches.
fn traced(scenario: &str, frames: u32) -> (Run, Trace, WrapCounts) {
    let dir = TempDir::new(scenario);
    let run = workload!(scenario)
        .arg("--frames", &frames.to_string())
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("UTRACE_LOG", "debug")
        .env("VK_LAYER_ENABLES", SYNC_VALIDATION)
        .run(&dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&run.stdout, &run);
    let counts = wrap_counts(&run.stderr);
    (run, trace, counts)
}

#[test]
fn a_resubmitted_command_buffer_runs_the_layers_commands_kept_for_its_recording() {
    let frames = 1000;
    let (_, trace, counts) = traced("resubmit", frames);
    assert_eq!(trace.batches.len(), frames as usize);
    assert_eq!(
        counts.recorded + counts.by_recipe + counts.by_recording,
        u64::from(frames),
        "every submission is wrapped once: {counts:?}"
    );
    // A set is recorded only when every set kept for the recording is still with the
    // batches traceq has not handed back yet (it lags the workload, which resubmits as soon
    // as its fence signals); from then on the sets run again as they are.
    assert!(
        counts.by_recording >= u64::from(frames) / 2,
        "resubmissions find the command buffers by their recording: {counts:?}"
    );
    // A miss by recording falls back to comparing recipes, which finds a set when traceq
    // handed one back in between (CI once saw 1 of 1000): a miss either way, and rare.
    assert!(
        counts.by_recipe + counts.recorded < u64::from(frames) / 2,
        "misses are rare: {counts:?}"
    );
    for w in trace.batches.windows(2) {
        assert!(
            w[1].events[0].ns > w[0].events[5].ns,
            "later runs, later times"
        );
    }
}

#[test]
fn re_recording_resetting_and_replacing_a_resubmitted_command_buffer_keeps_its_times_right() {
    let frames = 300;
    let (run, trace, counts) = traced("rerecord", frames);
    let submissions = &run.report().devices[0].submissions;
    // 300 frames of the reusable command buffer, and twelve pairs of pending runs.
    assert_eq!(submissions.len(), 300 + 2 * 12);
    for (batch, sub) in trace.batches.iter().zip(submissions) {
        let expected = match sub.label.strip_prefix("rerecord-") {
            Some(i) => rerecord_events(frames, i.parse().expect("a frame")),
            None => 6,
        };
        assert_eq!(
            batch.events.len(),
            expected,
            "{}: the events of the recording submitted",
            sub.label
        );
        let names: Vec<&str> = batch.events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names[1], "start_fill_buffer", "{}", sub.label);
    }
    // Every submission is wrapped once. (How many find their recording's sets depends on
    // how far traceq lags: a set kept for a recording replaced since is recorded anew.)
    assert_eq!(
        counts.recorded + counts.by_recipe + counts.by_recording,
        submissions.len() as u64,
        "{counts:?}"
    );
    assert_eq!(trace.ends[0].dropped, 0);
}
