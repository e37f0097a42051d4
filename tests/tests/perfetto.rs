//! `GPU_TRACE_FORMAT=perfetto`: the written trace decoded independently of the SDK that
//! wrote it (tests/src/perfetto_trace.rs) and checked against the workload's own account
//! and against the txt trace of the same run.

use std::collections::HashMap;
use std::path::Path;

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::harness::{Run, TempDir, XServer};
use utrace_tests::perfetto_trace::{self, Resolved, Stage};
use utrace_tests::report::Submission;
use utrace_tests::trace_txt::{Batch, Trace};
use utrace_tests::workload;

const LAYERS: &[&str] = &["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"];

/// A range of the txt trace as Perfetto should show it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Range {
    gpu_ns: u64,
    duration: u64,
    name: String,
    submission: u64,
    args: Vec<(String, String)>,
}

/// The ranges (begin + end) and markers of a txt batch, named as their stages.
fn txt_ranges(batch: &Batch, stages: &HashMap<String, String>) -> Vec<Range> {
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut out = Vec::new();
    for (i, e) in batch.events.iter().enumerate() {
        let range_name = |name: &str| {
            let rest = name
                .strip_prefix("start_")
                .or_else(|| name.strip_prefix("end_"))
                .or_else(|| name.strip_prefix("begin_"))
                .unwrap_or(name);
            rest.to_string()
        };
        let stage = |e: &utrace_tests::trace_txt::Event| match e.arg("label") {
            Some(label) => label.to_string(),
            None => stages[&e.name].clone(),
        };
        if e.name.starts_with("end_") {
            let r = range_name(&e.name);
            if let Some(at) = open.iter().rposition(|(_, n)| *n == r) {
                let begin = &batch.events[open[at].0];
                out.push(Range {
                    gpu_ns: begin.ns,
                    duration: e.ns - begin.ns,
                    name: stage(begin),
                    submission: batch.submission,
                    args: begin.args.clone(),
                });
                open.truncate(at);
            }
        } else if stages.contains_key(&e.name)
            && (e.name.starts_with("start_") || e.name.starts_with("begin_"))
        {
            open.push((i, range_name(&e.name)));
        } else {
            out.push(Range {
                gpu_ns: e.ns,
                duration: 0,
                name: stage(e),
                submission: batch.submission,
                args: e.args.clone(),
            });
        }
    }
    out
}

fn perfetto_ranges(stages: &[Stage]) -> Vec<Range> {
    stages
        .iter()
        .map(|s| Range {
            gpu_ns: s.gpu_ns,
            duration: s.duration,
            name: s.name.clone(),
            submission: u64::from(s.submission),
            args: s.args.clone(),
        })
        .collect()
}

/// The workload's submission that the Perfetto submit `boot_ns` with `cmdbufs` was.
fn report_submission<'a>(
    subs: &'a [Submission],
    cmdbufs: &[u64],
    boot_ns: u64,
    boot_minus_mono: i64,
) -> &'a Submission {
    let mono = (boot_ns as i64 - boot_minus_mono) as u64;
    let names: Vec<String> = cmdbufs.iter().map(|c| format!("{c:#x}")).collect();
    subs.iter()
        .find(|s| s.cmdbufs == names && s.cpu_before_ns <= mono && mono <= s.cpu_after_ns)
        .unwrap_or_else(|| panic!("no submission of {names:?} around {mono}: {subs:#?}"))
}

/// Every stage inside the CPU window of the submission it belongs to, on BOOTTIME.
fn assert_inside_submissions(trace: &Resolved, subs: &[Submission]) {
    let offset = perfetto_trace::boottime_minus_monotonic();
    assert!(!trace.submits.is_empty());
    for submit in &trace.submits {
        let sub = report_submission(subs, &submit.command_buffers, submit.boot_ns, offset);
        let (lo, hi) = (
            (sub.cpu_before_ns as i64 + offset) as u64,
            (sub.cpu_after_ns as i64 + offset) as u64,
        );
        assert!(submit.pid > 0 && submit.tid > 0, "{submit:?}");
        assert!(submit.boot_ns + submit.duration_ns <= hi, "{submit:?}");
        let stages: Vec<&Stage> = trace
            .stages
            .iter()
            .filter(|s| s.submission == submit.submission && s.sequence == submit.sequence)
            .collect();
        assert!(
            !stages.is_empty(),
            "submission {} has stages",
            submit.submission
        );
        for s in stages {
            assert!(
                lo <= s.boot_ns && s.boot_ns + s.duration <= hi,
                "{} [{}, +{}] outside its submission's CPU window [{lo}, {hi}] ({})",
                s.name,
                s.boot_ns,
                s.duration,
                sub.label
            );
            assert!(
                submit.boot_ns <= s.boot_ns,
                "{} starts before its vkQueueSubmit",
                s.name
            );
        }
    }
}

/// Within a command buffer's run, two stages nest or are apart; a stage in a render pass
/// lies inside that render pass.
fn assert_children_inside_parents(trace: &Resolved) {
    let stages = &trace.stages;
    for a in stages {
        for b in stages {
            if a.submission != b.submission || a.command_buffer != b.command_buffer {
                continue;
            }
            let (a0, a1, b0, b1) = (
                a.gpu_ns,
                a.gpu_ns + a.duration,
                b.gpu_ns,
                b.gpu_ns + b.duration,
            );
            let apart = a1 <= b0 || b1 <= a0;
            let nested = (a0 <= b0 && b1 <= a1) || (b0 <= a0 && a1 <= b1);
            assert!(apart || nested, "{a:#?} overlaps {b:#?}");
        }
        if a.render_pass != 0 && a.name != "Render Pass" {
            let pass = stages
                .iter()
                .find(|p| {
                    p.name == "Render Pass"
                        && p.render_pass == a.render_pass
                        && p.submission == a.submission
                        && p.gpu_ns <= a.gpu_ns
                        && a.gpu_ns + a.duration <= p.gpu_ns + p.duration
                })
                .map(|p| p.name.clone());
            assert!(pass.is_some(), "{} outside its render pass", a.name);
        }
    }
}

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
    assert!(trace.clears >= 1 && trace.snapshots >= 1);
    let queues: Vec<&str> = trace.stages.iter().map(|s| s.queue.as_str()).collect();
    assert!(
        queues.iter().all(|q| q.contains(&txt.batches[0].queue)),
        "{queues:?}"
    );
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

    assert_inside_submissions(&trace, &run.report.devices[0].submissions);
    assert_children_inside_parents(&trace);

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
    let named: Vec<&str> = trace.names.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(named, ["copy and update", "scene pass"]);
    let pass = &trace.names[1];
    assert_eq!(pass.object_type, 18, "VK_OBJECT_TYPE_RENDER_PASS");
    assert!(trace
        .stages
        .iter()
        .any(|s| s.name == "Render Pass" && s.render_pass == pass.object));
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
        .env("DISPLAY", &x.display);
    for (k, v) in extra {
        w = w.env(k, v);
    }
    let run = w.run(&dir);
    assert_clean(&run);
    assert_eq!(run.report.presents, 10);
    assert!(run.stdout.is_empty(), "only the file: {}", run.stdout);
    let trace = perfetto_trace::read(&file);
    assert_inside_submissions(&trace, &run.report.devices[0].submissions);
    assert_children_inside_parents(&trace);
    (run, trace)
}

/// Per captured submission: its frame and the command buffers that have stages.
fn captured(run: &Run, trace: &Resolved) -> Vec<(u32, Vec<String>)> {
    let subs = &run.report.devices[0].submissions;
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
    let subs = &run.report.devices[0].submissions;
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
    let subs = &run.report.devices[0].submissions;
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
