//! `GPU_TRACE_FORMAT=perfetto`: the written trace decoded independently of the SDK that
//! wrote it (tests/src/perfetto_trace.rs) and checked against the workload's own account
//! and against the txt trace of the same run.

use std::collections::HashMap;
use std::path::Path;

use utrace_tests::checks::{
    assert_batches_match_within, assert_clean, assert_trace_matches, device_batches, parse,
    SUBMIT_SLACK_NS,
};
use utrace_tests::harness::{Run, TempDir, XServer};
use utrace_tests::perfetto_checks::{
    assert_children_inside_parents, assert_inside_submissions, assert_snapshots_true,
    report_submission,
};
use utrace_tests::perfetto_trace::{self, Resolved, Stage};
use utrace_tests::stage_ranges::{perfetto_ranges, txt_ranges, Range};
use utrace_tests::trace_txt::Trace;
use utrace_tests::workload;

const LAYERS: &[&str] = &["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"];

fn run_demo(dir: &TempDir, file: &Path, extra: &[(&str, &str)]) -> Run {
    let mut w = workload!("demo")
        .layers(LAYERS)
        .env("GPU_TRACE_FORMAT", "txt,perfetto")
        .env("GPU_TRACEFILE", file.to_str().unwrap());
    for (k, v) in extra {
        w = w.env(k, v);
    }
    let run = w.run(dir);
    assert_clean(&run);
    assert!(
        !run.stderr.contains("perfetto_c.cc"),
        "the SDK's own logging stays out of the application's stderr: {}",
        run.stderr
    );
    run
}

#[test]
fn render_stages_match_the_txt_trace_one_to_one() {
    let dir = TempDir::new("perfetto-demo");
    let file = dir.path().join("gpu.pftrace");
    let run = run_demo(&dir, &file, &[]);
    let txt: Trace = assert_trace_matches(&run.stdout, &run);
    let trace = perfetto_trace::read(&file);

    let names = perfetto_trace::stage_names();
    let mut expected: Vec<Range> = txt
        .batches
        .iter()
        .flat_map(|b| txt_ranges(b, &names))
        .collect();
    let mut got = perfetto_ranges(&trace.stages);
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
    assert!(
        got.iter().any(|r| r.name == "scene"),
        "labels are stages named by the label"
    );
    assert!(got.iter().any(|r| r.name == "Draw"));

    // One sequence (one device), cleared first, a clock snapshot before the first event
    // (resolving an event's clock fails otherwise).
    assert!(trace.clears >= 1 && !trace.snapshots.is_empty());
    // One queue track, named as the application named the queue, its handle, family and
    // index in the description.
    for s in &trace.stages {
        assert_eq!(s.queue, "demo queue");
        assert!(s.queue_description.ends_with("family 0, index 0"), "{s:?}");
        assert!(s.queue_description.contains(&txt.batches[0].queue), "{s:?}");
    }
    assert!(trace.stages.iter().all(|s| s.gpu_id == 0));
    let cats: HashMap<&str, i32> = trace
        .stages
        .iter()
        .map(|s| (s.name.as_str(), s.category))
        .collect();
    assert_eq!(
        (cats["Draw"], cats["Dispatch"], cats["Fill Buffer"]),
        (1, 2, 0)
    );

    assert_inside_submissions(&trace, &run.report().devices[0].submissions, 0);
    assert_children_inside_parents(&trace);
    // Lavapipe's device clock is CLOCK_MONOTONIC: each snapshot pairs it with BOOTTIME at
    // the offset between the two clocks, to within the calibrated sampling's deviation.
    assert_snapshots_true(&trace, 200_000);

    // One vk_queue_submit per batch, naming its command buffers; and the names the
    // application gave.
    assert_eq!(trace.submits.len(), txt.batches.len());
    for (submit, batch) in trace.submits.iter().zip(&txt.batches) {
        assert_eq!(u64::from(submit.submission), batch.submission);
        let cmds: Vec<String> = batch
            .events
            .iter()
            .filter(|e| e.name == "start_cmd_buffer")
            .map(|e| e.arg("cmd").unwrap().to_string())
            .collect();
        let got: Vec<String> = submit
            .command_buffers
            .iter()
            .map(|c| format!("{c:#x}"))
            .collect();
        assert_eq!(got, cmds);
    }
    // The file session clears incremental state every second: a run that takes longer
    // (a loaded machine) re-sends every name on the cleared sequence, whole.
    let named: Vec<&str> = trace.names.iter().map(|n| n.name.as_str()).collect();
    assert!(!named.is_empty());
    for sent in named.chunks(4) {
        assert_eq!(
            sent,
            [
                "copy and update",
                "scene pass",
                "demo queue",
                "fill compute"
            ],
            "{named:?}"
        );
    }
    let pass = &trace.names[1];
    assert_eq!(pass.object_type, 18, "VK_OBJECT_TYPE_RENDER_PASS");
    let pass_stages: Vec<&Stage> = trace
        .stages
        .iter()
        .filter(|s| s.name == "Render Pass" && s.render_pass == pass.object)
        .collect();
    assert!(!pass_stages.is_empty());
    for s in &pass_stages {
        // Its framebuffer is the stage's render target.
        let framebuffer = s.args.iter().find(|(k, _)| k == "framebuffer").unwrap();
        assert_eq!(framebuffer.1, format!("{:#x}", s.render_target));
    }
    // A trace processor names a stage by the names it met before it (in time order).
    for s in pass_stages {
        assert!(pass.boot_ns < s.boot_ns, "{pass:?} after {s:?}");
    }
    let copy = &trace.names[0];
    assert_eq!(copy.object_type, 6, "VK_OBJECT_TYPE_COMMAND_BUFFER");
    assert!(trace
        .stages
        .iter()
        .filter(|s| s.command_buffer == copy.object)
        .all(|s| copy.boot_ns < s.boot_ns));
}

/// `frames` (10 presents) with `GPU_TRACE_FRAMES=3-5` written as Perfetto: the command
/// buffers of each captured submission.
fn window(extra: &[(&str, &str)]) -> (Run, Resolved) {
    let x = XServer::start();
    let dir = TempDir::new("perfetto-window");
    let file = dir.path().join("window.pftrace");
    let mut w = workload!("frames")
        .arg("--frames", "10")
        .layers(LAYERS)
        .env("GPU_TRACE_FORMAT", "perfetto")
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("GPU_TRACE_FRAMES", "3-5")
        .env("UTRACE_LOG", "info")
        .env("DISPLAY", &x.display);
    for (k, v) in extra {
        w = w.env(k, v);
    }
    let run = w.run(&dir);
    assert_clean(&run);
    assert_eq!(run.report().presents, 10);
    assert!(run.stdout.is_empty(), "only the file: {}", run.stdout);
    // The window starts and stops the in-process session: the data source's on-start and
    // on-stop (the path a traced session takes) open and close the capture, and the batches
    // of the last frame, still on their way at the stop, are in the file.
    let order = [
        "frame 3 opens the GPU_TRACE_FRAMES window",
        "Perfetto session 0 started",
        "frame 5 closes the GPU_TRACE_FRAMES window",
        "Perfetto session 0 stopped",
        "Perfetto trace written",
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|m| {
            assert_eq!(run.stderr.matches(m).count(), 1, "{m}: {}", run.stderr);
            run.stderr.find(m).unwrap()
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{}", run.stderr);
    let trace = perfetto_trace::read(&file);
    assert_inside_submissions(&trace, &run.report().devices[0].submissions, 0);
    assert_children_inside_parents(&trace);
    // An unnamed queue's track is named by its family and index.
    assert!(trace.stages.iter().all(|s| s.queue == "Vulkan queue 0.0"));
    (run, trace)
}

/// Per captured submission: its frame and the command buffers that have stages.
fn captured(run: &Run, trace: &Resolved) -> Vec<(u32, Vec<String>)> {
    let subs = &run.report().devices[0].submissions;
    let offset = perfetto_trace::boottime_minus_monotonic();
    trace
        .submits
        .iter()
        .map(|submit| {
            let sub = report_submission(subs, &submit.command_buffers, submit.boot_ns, offset);
            let mut cmds: Vec<String> = trace
                .stages
                .iter()
                .filter(|s| s.submission == submit.submission && s.name == "Command Buffer")
                .map(|s| format!("{:#x}", s.command_buffer))
                .collect();
            cmds.sort();
            (sub.frame, cmds)
        })
        .collect()
}

#[test]
fn a_frame_window_captures_what_was_recorded_and_submitted_inside_it() {
    let (run, trace) = window(&[]);
    let subs = &run.report().devices[0].submissions;
    let got = captured(&run, &trace);
    // Frames 3 to 5, and in each only the command buffer recorded in that frame.
    let expected: Vec<(u32, Vec<String>)> = (3..=5)
        .map(|f| (f, vec![subs[f as usize].cmdbufs[0].clone()]))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn with_instrument_the_window_sees_command_buffers_recorded_before_it() {
    let (run, trace) = window(&[("GPU_TRACE_INSTRUMENT", "1")]);
    let subs = &run.report().devices[0].submissions;
    let got = captured(&run, &trace);
    let expected: Vec<(u32, Vec<String>)> = (3..=5)
        .map(|f| {
            let mut cmds = subs[f as usize].cmdbufs.clone();
            cmds.sort();
            (f, cmds)
        })
        .collect();
    assert_eq!(got, expected, "the start-up command buffer too");
}

#[test]
fn without_calibrated_timestamps_the_clock_is_measured() {
    let dir = TempDir::new("perfetto-measured");
    let file = dir.path().join("measured.pftrace");
    let run = run_demo(
        &dir,
        &file,
        &[("UTRACE_FORCE_MEASURED_CLOCK", "1"), ("UTRACE_LOG", "info")],
    );
    let txt: Trace = parse(&run.stdout);
    let trace = perfetto_trace::read(&file);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("GPU clock measured"))
        .unwrap_or_else(|| panic!("the measurement is reported: {}", run.stderr));
    // "... to within N ns (gated rounds)": the events may be off by that much.
    let uncertainty: u64 = line
        .split("to within ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(line.ends_with("(gated rounds)"), "{line}");
    // Microseconds on any machine of this kind (the tightest of up to 2,000 gated rounds);
    // 5 ms would take every round preempted across a time slice.
    assert!(uncertainty < 5_000_000, "{line}");
    // The text trace's submit times are placed by the same pairing.
    assert_batches_match_within(
        &device_batches(&txt, 0),
        &run.report().devices[0].submissions,
        uncertainty + SUBMIT_SLACK_NS,
    );
    assert_snapshots_true(&trace, uncertainty + 1_000);
    assert_inside_submissions(
        &trace,
        &run.report().devices[0].submissions,
        uncertainty + 1_000,
    );
    assert_eq!(trace.stages.len(), {
        let names = perfetto_trace::stage_names();
        txt.batches
            .iter()
            .map(|b| txt_ranges(b, &names).len())
            .sum::<usize>()
    });
}

#[test]
fn exit_without_destroying_the_device_still_writes_the_trace() {
    let dir = TempDir::new("perfetto-exit");
    let file = dir.path().join("exit.pftrace");
    // The file name alone selects the format.
    let run = workload!("basic")
        .arg("--exit-without-destroy", "")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let trace = perfetto_trace::read(&file);
    assert_eq!(trace.submits.len(), 4, "every batch, written at exit");
    // Per batch one command buffer range and two inner ranges (as in the txt test: 24
    // events, 12 ranges).
    assert_eq!(trace.stages.len(), 12);
    assert_inside_submissions(&trace, &run.report().devices[0].submissions, 0);
}

#[test]
fn an_unwritable_perfetto_file_is_reported_and_written_elsewhere() {
    let dir = TempDir::new("perfetto-unwritable");
    let path = format!("/nonexistent-utrace-dir-{}/gpu.pftrace", std::process::id());
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", &path)
        .env("TMPDIR", tmp.to_str().unwrap())
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert!(run.report().devices[0].results_ok);
    let lines: Vec<&str> = run.stderr.lines().filter(|l| l.contains(&path)).collect();
    assert_eq!(
        lines.len(),
        1,
        "one message naming the path: {}",
        run.stderr
    );
    let written: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let name = written[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        lines[0].contains(&name),
        "the message says where: {}",
        lines[0]
    );
    let trace = perfetto_trace::read(&written[0]);
    assert_eq!(trace.submits.len(), 4, "nothing lost");
}

#[test]
fn two_devices_write_one_file_each_on_its_own_sequence() {
    for scenario in ["two-devices", "two-instances"] {
        let dir = TempDir::new(scenario);
        let file = dir.path().join("two.pftrace");
        let run = workload!(scenario)
            .layers(LAYERS)
            .env("GPU_TRACEFILE", file.to_str().unwrap())
            .run(&dir);
        assert_clean(&run);
        let trace = perfetto_trace::read(&file);
        let submissions: usize = run
            .report()
            .devices
            .iter()
            .map(|d| d.submissions.len())
            .sum();
        assert_eq!(trace.submits.len(), submissions, "{scenario}");
        for device in [0, 1] {
            let stages: Vec<&Stage> = trace.stages.iter().filter(|s| s.gpu_id == device).collect();
            assert!(!stages.is_empty(), "{scenario}: device {device} has stages");
            // One device, one sequence (its traceq thread), its own clock snapshots.
            let seqs: std::collections::BTreeSet<u32> = stages.iter().map(|s| s.sequence).collect();
            assert_eq!(seqs.len(), 1, "{scenario}: device {device}");
        }
        let seq = |d: i32| {
            trace
                .stages
                .iter()
                .find(|s| s.gpu_id == d)
                .unwrap()
                .sequence
        };
        assert_ne!(seq(0), seq(1), "{scenario}");
        for device in &run.report().devices {
            let device_trace = Resolved {
                stages: trace
                    .stages
                    .iter()
                    .filter(|s| s.gpu_id == device.index as i32)
                    .cloned()
                    .collect(),
                submits: trace
                    .submits
                    .iter()
                    .filter(|s| s.sequence == seq(device.index as i32))
                    .cloned()
                    .collect(),
                ..Default::default()
            };
            assert_inside_submissions(&device_trace, &device.submissions, 0);
        }
    }
}
