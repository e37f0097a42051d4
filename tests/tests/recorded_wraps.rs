//! Resubmissions: a reusable command buffer submitted again goes without any command
//! buffer of the layer's when traceq read its last run; when traceq is behind, the
//! resubmission reads the run itself on a GPU, or, on Lavapipe (a CPU device whose query
//! reads wait for all its work, and are a round trip to its queue thread even when it is
//! idle), has the GPU save it first, and
//! where the layer's copy is needed (fence mode) it runs the copy command buffers kept for
//! the recording instead of recording new ones. The queues' counts at `UTRACE_LOG=debug`
//! say how each submission went; the times stay right when the recording changes between
//! submissions, its pool is reset, the command buffer is freed and replaced, and a
//! simultaneous-use one is pending twice. A resubmission with the GPU's work in flight
//! does not wait for it.

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::harness::{Run, TempDir, SYNC_VALIDATION};
use utrace_tests::patterns::rerecord::rerecord_events;
use utrace_tests::queue_counts::{counts, Counts};
use utrace_tests::trace_txt::Trace;
use utrace_tests::workload;

/// Runs `scenario` for `frames`, traced to stdout at `UTRACE_LOG=debug` with
/// synchronization validation beneath (and the environment `vars`, the workload's `args`);
/// asserts it ran clean, that the trace matches and that nothing was dropped.
fn traced(
    scenario: &str,
    frames: u32,
    vars: &[(&str, &str)],
    args: &[(&str, &str)],
) -> (Run, Trace, Counts) {
    let layers = ["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"];
    traced_with(&layers, scenario, frames, vars, args)
}

/// [`traced`] with Lavapipe presented as a GPU (the fault layer's `UTRACE_DEVICE_TYPE=gpu`,
/// validation beneath it): its query reads are taken not to wait, as on a real GPU.
fn traced_on_a_gpu(scenario: &str, frames: u32) -> (Run, Trace, Counts) {
    assert!(
        utrace_tests::harness::fault_layer_library().is_some(),
        "the fault-injection layer is not built: cargo build -p utrace-fault-layer (or run bash scripts/test.sh)"
    );
    let layers = [
        "VK_LAYER_utrace",
        "VK_LAYER_UTRACE_fault",
        "VK_LAYER_KHRONOS_validation",
    ];
    let gpu = [("UTRACE_DEVICE_TYPE", "gpu")];
    traced_with(&layers, scenario, frames, &gpu, &[])
}

fn traced_with(
    layers: &[&str],
    scenario: &str,
    frames: u32,
    vars: &[(&str, &str)],
    args: &[(&str, &str)],
) -> (Run, Trace, Counts) {
    let dir = TempDir::new(scenario);
    let mut workload = workload!(scenario)
        .arg("--frames", &frames.to_string())
        .layers(layers)
        .env("GPU_TRACE", "1")
        .env("UTRACE_LOG", "debug")
        .env("VK_LAYER_ENABLES", SYNC_VALIDATION);
    for (k, v) in vars {
        workload = workload.env(k, v);
    }
    for (k, v) in args {
        workload = workload.arg(k, v);
    }
    let run = workload.run(&dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&run.stdout, &run);
    assert_eq!(trace.ends[0].dropped, 0, "nothing lost");
    let counts = counts(&run.stderr);
    (run, trace, counts)
}

/// Each run of the resubmitted command buffer (six events) after the one before.
fn later_runs_later_times(trace: &Trace) {
    for w in trace.batches.windows(2) {
        assert!(
            w[1].events[0].ns > w[0].events[5].ns,
            "later runs, later times"
        );
    }
}

#[test]
fn a_resubmitted_command_buffers_own_run_needs_no_command_buffer_of_the_layers() {
    let frames = 1000;
    let (_, trace, counts) = traced_on_a_gpu("resubmit", frames);
    assert_eq!(trace.batches.len(), frames as usize);
    assert_eq!(counts.submissions(), u64::from(frames), "{counts:?}");
    // The workload submits again as soon as its fence signals: traceq, which lets
    // submissions gather for a millisecond before it wakes, is often behind, and on a GPU
    // the resubmission reads the last run itself. No copy is recorded or run after the run
    // itself, and nothing is saved. The first resubmission comes well within traceq's
    // first millisecond asleep. The trace matching the workload's times shows each run's
    // values went to its own batch.
    let (read, saved) = (counts.read_at_resubmission, counts.saved_at_resubmission);
    assert_eq!(
        (counts.unwrapped, saved),
        (u64::from(frames), 0),
        "{counts:?}"
    );
    assert!(read > 0 && read < u64::from(frames), "{counts:?}");
    // Looked up at its first submission, and at its second (nothing had followed it
    // yet); from then on found as the command buffer that follows itself.
    assert_eq!(
        (counts.looked_up, counts.found_in_order),
        (2, u64::from(frames) - 2),
        "{counts:?}"
    );
    later_runs_later_times(&trace);
}

/// Run slots off (`UTRACE_DEBUG_NO_RUN_SLOTS=1`): tracked runs stay in their queries only,
/// as where a family cannot copy query results, and Lavapipe's resubmissions save them.
const NO_SLOTS: [(&str, &str); 1] = [("UTRACE_DEBUG_NO_RUN_SLOTS", "1")];

#[test]
fn on_lavapipe_a_resubmission_reads_its_last_run_from_its_slot_or_has_it_saved() {
    // A tracked command buffer copies its queries into its run slot at its end: a
    // resubmission that finds its last run unread reads the slot (memory). Without slots,
    // Lavapipe's query read is a round trip to its queue thread even with nothing in
    // flight (26.7 us a resubmission of one command buffer right after its fence, against
    // 3.3 us for the save), so the resubmission has the GPU save the run. The first
    // resubmission comes well within traceq's first millisecond asleep.
    let frames = 200;
    let (_, trace, counts) = traced("resubmit", frames, &[], &[]);
    assert_eq!(trace.batches.len(), frames as usize);
    assert_eq!(counts.saved_at_resubmission, 0, "{counts:?}");
    assert_eq!(counts.unwrapped, u64::from(frames), "{counts:?}");
    assert!(counts.read_at_resubmission > 0, "{counts:?}");
    later_runs_later_times(&trace);

    let (_, trace, counts) = traced("resubmit", frames, &NO_SLOTS, &[]);
    assert_eq!(trace.batches.len(), frames as usize);
    let saved = counts.saved_at_resubmission;
    assert_eq!(counts.read_at_resubmission, 0, "{counts:?}");
    assert_eq!(counts.unwrapped + saved, u64::from(frames), "{counts:?}");
    assert!(saved > 0, "{counts:?}");
    later_runs_later_times(&trace);
}

/// `scenario` (`resubmit-busy` or `-many`, paced `pace_ms`): no resubmission waits for the
/// long work in flight. Its counts.
fn busy_resubmissions_do_not_wait(scenario: &str, pace_ms: u32, slots: bool) -> Counts {
    let frames = 5;
    let pace = pace_ms.to_string();
    let vars: &[(&str, &str)] = if slots { &[] } else { &NO_SLOTS };
    let (run, trace, counts) = traced(scenario, frames, vars, &[("--pace-ms", &pace)]);
    // Every batch written (a save's command buffers are counted with the wrapped
    // submissions', one set a save).
    assert_eq!(trace.batches.len(), 2 * frames as usize - 1);
    if slots {
        // Read from the run slots: memory, which no work in flight holds up.
        assert_eq!(counts.saved_at_resubmission, 0, "{counts:?}");
    } else {
        assert!(counts.saved_at_resubmission >= 1, "{counts:?}");
    }
    // No resubmission waited for the long work in flight at it (tens of ms, submitted in
    // the frame before): each submit call returned before that work ended on the GPU
    // (Lavapipe's device clock is CLOCK_MONOTONIC, the workload's). A call that waited for
    // it, reading the last run itself or behind traceq's read, returns after. Timed this
    // way it holds on a slow or busy machine, where a call may take milliseconds of its own
    // (a first submission, a thread kept off the cores) and the long work stretches too.
    // (traceq checks the queue again under the run's lock before it reads: design §14,
    // the driver's own call is the window left.)
    let submissions = &run.report().devices[0].submissions;
    let mut checked = 0;
    for (i, pair) in submissions.windows(2).enumerate() {
        let (long, busy) = (&pair[0], &pair[1]);
        if !(long.label.starts_with("long-") && busy.label.starts_with("resubmit-busy-")) {
            continue;
        }
        let long_end = trace.batches[i]
            .events
            .iter()
            .map(|e| e.ns)
            .max()
            .expect("the long work's events");
        let returned = busy.cpu_before_ns + busy.call_ns;
        assert!(
            returned < long_end,
            "{}: the submit call returned {} µs after {} ended on the GPU (it took {} µs): {}",
            busy.label,
            (returned - long_end) / 1_000,
            long.label,
            busy.call_ns / 1_000,
            run.stderr
        );
        checked += 1;
    }
    assert_eq!(
        checked,
        frames as usize - 1,
        "every resubmission with long work in flight"
    );
    counts
}

#[test]
fn on_lavapipe_a_resubmission_with_work_in_flight_does_not_wait_for_it() {
    // Lavapipe's vkGetQueryPoolResults waits for the device to go idle. The workload
    // resubmits its command buffer as soon as the fence signals, with long work submitted
    // after the last run still on the GPU: the last run is not read yet (traceq lets
    // submissions gather for a millisecond), and reading it at the resubmission would wait
    // for the long work. The GPU saves it instead, behind the long work, and traceq reads
    // it from there.
    busy_resubmissions_do_not_wait("resubmit-busy", 0, true);
    busy_resubmissions_do_not_wait("resubmit-busy", 0, false);
}

#[test]
fn on_lavapipe_a_resubmission_while_traceq_reads_the_last_run_does_not_wait_for_it() {
    // 3 ms of the application's own work before each resubmission: traceq has woken and
    // is about to read the last run, which on Lavapipe waits for the long work. It waits
    // for that work without the run's lock first, so the resubmission still has the run
    // saved rather than waiting for the read.
    busy_resubmissions_do_not_wait("resubmit-busy", 3, true);
    busy_resubmissions_do_not_wait("resubmit-busy", 3, false);
}

#[test]
fn on_lavapipe_six_command_buffers_resubmitted_together_with_work_in_flight_do_not_wait() {
    // Six reusable command buffers in one batch, resubmitted as soon as the fence signals:
    // more saves than one submission holds on the stack (they spill to the heap rather
    // than being read on the host, which would wait for the long work). With run slots, all
    // six are read from their slots.
    busy_resubmissions_do_not_wait("resubmit-busy-many", 0, true);
    let counts = busy_resubmissions_do_not_wait("resubmit-busy-many", 0, false);
    assert!(
        counts.saved_at_resubmission > 4 * 4,
        "more than four saved in a submission: {counts:?}"
    );
}

#[test]
fn with_fences_a_resubmission_runs_the_layers_commands_kept_for_its_recording() {
    let frames = 1000;
    let (_, trace, counts) = traced("resubmit", frames, &[("UTRACE_FORCE_FENCE", "1")], &[]);
    assert_eq!(trace.batches.len(), frames as usize);
    assert_eq!(
        counts.unwrapped, 0,
        "fence mode copies every run: {counts:?}"
    );
    assert_eq!(counts.submissions(), u64::from(frames), "{counts:?}");
    // A set is recorded only when every set kept for the recording is still with the
    // batches traceq has not handed back yet (it lags the workload); from then on the sets
    // run again as they are. A miss by recording falls back to comparing recipes, which
    // finds a set when traceq handed one back in between: a miss either way, and rare.
    assert!(
        counts.by_recording >= u64::from(frames) / 2,
        "resubmissions find the command buffers by their recording: {counts:?}"
    );
    later_runs_later_times(&trace);
}

#[test]
fn re_recording_resetting_and_replacing_a_resubmitted_command_buffer_keeps_its_times_right() {
    let frames = 300;
    let (run, trace, counts) = traced("rerecord", frames, &[], &[]);
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
    // Every submission counted once; the reusable command buffer's runs go without the
    // layer's command buffers (the simultaneous-use pairs are copied).
    assert_eq!(counts.submissions(), submissions.len() as u64, "{counts:?}");
    assert!(
        counts.unwrapped + counts.saved_at_resubmission >= 300,
        "{counts:?}"
    );
    // Most resubmissions found their trace in the queue's order; each new recording was
    // looked up (the events above show none found an old one).
    assert!(
        counts.found_in_order > counts.looked_up && counts.looked_up > 12,
        "{counts:?}"
    );
}

#[test]
fn command_buffers_resubmitted_in_a_changing_order_each_run_their_own_recording() {
    let frames = 120;
    let (run, trace, counts) = traced("shuffled-resubmits", frames, &[], &[]);
    let submissions = &run.report().devices[0].submissions;
    assert_eq!(trace.batches.len(), submissions.len());
    for (batch, sub) in trace.batches.iter().zip(submissions) {
        let (_, ids) = sub.label.split_once(':').expect("ids in the label");
        let expected: Vec<String> = ids
            .split(',')
            .map(|id| (4 * id.parse::<u32>().expect("an id")).to_string())
            .collect();
        let sizes: Vec<&str> = batch
            .events
            .iter()
            .filter(|e| e.name == "start_fill_buffer")
            .filter_map(|e| e.arg("size"))
            .collect();
        assert_eq!(sizes, expected, "{}: the recordings submitted", sub.label);
    }
    // Most were found in the queue's order; those the order had changed around, and every
    // new recording, were looked up.
    assert!(
        counts.found_in_order > counts.looked_up && counts.looked_up > 100,
        "{counts:?}"
    );
}
