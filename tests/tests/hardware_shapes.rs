//! Traces on the GPUs people profile on, emulated beneath utrace by the test layer's
//! hardware shapes (`UTRACE_SHAPE`, tests/fault-layer/src/shape): Intel-like (52.083 ns
//! ticks, 36 valid bits, the counter wrapping about a second into the run), AMD-like
//! (10 ns) and a Vulkan 1.1-class device (83.333 ns; no calibrated timestamps, host query
//! reset or timeline semaphores: the fence path and the measured clock). Validation runs
//! beneath the shape layer.
//!
//! Each run is checked against the driver's own nanoseconds of the same timestamps, which
//! the shape layer logs (the 1-ns reference, [`Truth`]): every time utrace wrote is the
//! driver's time plus one constant, to within a tick (a wrong period, a wrap taken for a
//! jump back or a negative duration all break that); every event of the reference lies
//! inside its submission's CPU window; every duration agrees with the reference's to within
//! a tick; `utrace report` gives the same ranges for both; and every Perfetto stage is
//! placed on the CPU timeline where the reference says it ran.

use std::process::Command;

use utrace_tests::checks::{
    assert_batches_match_within, assert_clean, device_batches, parse, report_rows,
};
use utrace_tests::harness::{utrace_exe, Run, TempDir, XServer};
use utrace_tests::perfetto_trace::{self, Resolved};
use utrace_tests::shapes::Truth;
use utrace_tests::stage_ranges::{perfetto_ranges, txt_ranges};
use utrace_tests::trace_txt::Trace;
use utrace_tests::workload;

/// One shaped run: the workload's report, utrace's txt and Perfetto traces, the truth.
struct Shaped {
    run: Run,
    txt: Trace,
    perfetto: Resolved,
    truth: Truth,
    dir: TempDir,
}

/// Runs `scenario` (with `args`) on `shape`, tracing txt to stdout and Perfetto to a file.
fn shaped(shape: &str, scenario: &str, args: &[(&str, &str)]) -> Shaped {
    assert!(
        utrace_tests::harness::fault_layer_library().is_some(),
        "the test layer is not built: cargo build -p utrace-fault-layer (or run bash scripts/test.sh)"
    );
    let dir = TempDir::new(&format!("shape-{shape}-{scenario}"));
    let file = dir.path().join("gpu.pftrace");
    let log = dir.path().join("shape.log");
    let x = (scenario == "frames").then(XServer::start);
    let mut w = workload!(scenario)
        .layers(&[
            "VK_LAYER_utrace",
            "VK_LAYER_UTRACE_fault",
            "VK_LAYER_KHRONOS_validation",
        ])
        .env("UTRACE_SHAPE", shape)
        .env("UTRACE_SHAPE_LOG", log.to_str().expect("a UTF-8 path"))
        .env("UTRACE_LOG", "debug")
        .env("GPU_TRACE_FORMAT", "txt,perfetto")
        .env("GPU_TRACEFILE", file.to_str().expect("a UTF-8 path"));
    for (name, value) in args {
        w = w.arg(name, value);
    }
    if let Some(x) = &x {
        w = w.env("DISPLAY", &x.display);
    }
    let run = w.run(&dir);
    assert_clean(&run);
    let txt = parse(&run.stdout);
    let truth = Truth::read(&log, &run.stderr);
    assert_eq!(truth.shape.name, shape);
    truth.shape.assert_in_header(&txt);
    let perfetto = perfetto_trace::read(&file);
    Shaped {
        run,
        txt,
        perfetto,
        truth,
        dir,
    }
}

/// Every time utrace wrote is the driver's plus one constant, to within a tick: the
/// constant's spread over the run.
fn assert_one_clock(s: &Shaped) {
    let offsets: Vec<i128> = s
        .txt
        .batches
        .iter()
        .flat_map(|b| &b.events)
        .map(|e| i128::from(e.ns) - i128::from(s.truth.of(e.ns)))
        .collect();
    assert!(!offsets.is_empty(), "the run was traced: {}", s.run.stderr);
    let spread = offsets.iter().max().unwrap() - offsets.iter().min().unwrap();
    // One tick of rounding each way; the period as an f32 is off by parts in 10^9.
    let allowed = 2 * i128::from(s.truth.shape.tick_ns());
    assert!(
        spread <= allowed,
        "{}: utrace's times drift from the driver's by {spread} ns over the run (allowed {allowed})",
        s.truth.shape.name
    );
}

/// The reference trace's events lie inside their submissions' CPU windows, well nested,
/// its submit times there to within `pairing_slack` ns (the clock pairing's error); each
/// range's duration agrees with the reference's to within a tick, and none is negative.
fn assert_reference_matches(s: &Shaped, pairing_slack: u64) -> Trace {
    let reference = s.truth.reference(&s.txt);
    for device in &s.run.report().devices {
        assert_batches_match_within(
            &device_batches(&reference, device.index),
            &device.submissions,
            pairing_slack,
        );
    }
    let names = perfetto_trace::stage_names();
    let tick = s.truth.shape.tick_ns();
    for (b, r) in s.txt.batches.iter().zip(&reference.batches) {
        let (got, want) = (txt_ranges(b, &names), txt_ranges(r, &names));
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!(
                g.duration.abs_diff(w.duration) <= tick,
                "{} in batch {}: {} ns, the driver says {} ns",
                g.name,
                b.number,
                g.duration,
                w.duration
            );
        }
    }
    reference
}

/// `utrace report` of utrace's trace and of the reference: the same rows, the same counts,
/// totals within a tick a range.
fn assert_same_report(s: &Shaped) {
    let report = |name: &str, text: &str| {
        let path = s.dir.path().join(name);
        std::fs::write(&path, text).expect("a txt trace");
        let out = Command::new(utrace_exe())
            .args(["report", "--json"])
            .arg(&path)
            .output()
            .expect("utrace runs");
        report_rows(&out)
    };
    let (got, got_rows) = report("shaped.txt", &s.run.stdout);
    let (want, want_rows) = report("reference.txt", &s.truth.reference_text(&s.run.stdout));
    assert_eq!(got_rows, want_rows, "the same ranges, counted alike");
    let tick = s.truth.shape.tick_ns();
    let rows = |v: &serde_json::Value| {
        let mut rows = v["rows"].as_array().expect("rows").clone();
        rows.sort_by_key(|r| r["key"].to_string());
        rows
    };
    for (g, w) in rows(&got).iter().zip(&rows(&want)) {
        let count = g["count"].as_u64().expect("a count");
        for field in ["total_ns", "max_ns", "p50_ns"] {
            let (Some(gv), Some(wv)) = (g[field].as_u64(), w[field].as_u64()) else {
                panic!("{field} in {g} and {w}");
            };
            let allowed = if field == "total_ns" {
                count * tick
            } else {
                tick
            };
            assert!(
                gv.abs_diff(wv) <= allowed,
                "{}: {field} {gv} ns, the reference's {wv} ns",
                g["key"]
            );
        }
    }
}

/// The Perfetto stages are the txt ranges, each placed on the CPU timeline where the
/// reference says it ran, to within `slack` ns (the clock pairing's error).
fn assert_perfetto_placed(s: &Shaped, slack: u64) -> u64 {
    let names = perfetto_trace::stage_names();
    let mut expected: Vec<_> = s
        .txt
        .batches
        .iter()
        .flat_map(|b| txt_ranges(b, &names))
        .collect();
    let mut got = perfetto_ranges(&s.perfetto.stages);
    expected.sort();
    got.sort();
    assert_eq!(got, expected, "Perfetto stages = txt ranges");
    let offset = perfetto_trace::boottime_minus_monotonic();
    // Inside its submission's CPU window (batches and the report's submissions pair up in
    // order, as `assert_batches_match` checked).
    let subs = &s.run.report().devices[0].submissions;
    for (batch, sub) in device_batches(&s.txt, 0).iter().zip(subs) {
        let lo = (sub.cpu_before_ns as i64 + offset) as u64 - slack;
        let hi = (sub.cpu_after_ns as i64 + offset) as u64 + slack;
        for stage in s
            .perfetto
            .stages
            .iter()
            .filter(|st| u64::from(st.submission) == batch.submission)
        {
            assert!(
                lo <= stage.boot_ns && stage.boot_ns + stage.duration <= hi,
                "{} [{}, +{}] outside its submission's CPU window [{lo}, {hi}] ({})",
                stage.name,
                stage.boot_ns,
                stage.duration,
                sub.label
            );
        }
    }
    let mut worst = 0;
    for stage in &s.perfetto.stages {
        let truth = (s.truth.of(stage.gpu_ns) as i64 + offset) as u64;
        let error = stage.boot_ns.abs_diff(truth);
        worst = worst.max(error);
        assert!(
            error <= slack,
            "{}: Perfetto places it at {}, the driver ran it at {truth} ({error} ns off, allowed {slack})",
            stage.name,
            stage.boot_ns
        );
    }
    worst
}

/// All the checks of one run; `perfetto_slack` as for [`assert_perfetto_placed`] (and for
/// the text trace's submit times, placed by the same pairing).
fn check(s: &Shaped, perfetto_slack: u64) {
    assert!(s.truth.pairs() > 0);
    assert_one_clock(s);
    assert_reference_matches(s, perfetto_slack);
    assert_same_report(s);
    let worst = assert_perfetto_placed(s, perfetto_slack);
    eprintln!(
        "{}: {} batches, {} stages, Perfetto placement off by {worst} ns at most",
        s.truth.shape.name,
        s.txt.batches.len(),
        s.perfetto.stages.len()
    );
}

/// Half the measured clock's tightest round trip, as utrace said it at `info`.
fn measured_uncertainty(run: &Run) -> u64 {
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("GPU clock measured against"))
        .unwrap_or_else(|| panic!("the clock is measured: {}", run.stderr));
    // "... to within N ns (gated rounds)"
    line.split("to within ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"))
}

/// How far a Perfetto stage may be placed from where it ran with calibrated timestamps:
/// two ticks, and 2 µs for the pairing (the layer keeps the tightest of a few calibrated
/// reads; one preempted between its two clocks is microseconds off).
fn calibrated_slack(s: &Shaped) -> u64 {
    2 * s.truth.shape.tick_ns() + 2_000
}

/// Intel-like: the wrap is crossed in every paced run.
fn intel(scenario: &str, args: &[(&str, &str)], crosses: bool) {
    let s = shaped("intel", scenario, args);
    if crosses {
        assert!(
            s.truth.crosses_wrap(&s.txt),
            "the 36-bit counter wrapped during the run"
        );
    }
    check(&s, calibrated_slack(&s));
}

fn amd(scenario: &str, args: &[(&str, &str)]) {
    let s = shaped("amd", scenario, args);
    check(&s, calibrated_slack(&s));
}

fn v1_1(scenario: &str, args: &[(&str, &str)]) {
    let s = shaped("v1_1", scenario, args);
    assert!(
        s.run
            .stderr
            .contains("completion by fence, queries reset on the GPU"),
        "no timeline semaphores or host query reset: {}",
        s.run.stderr
    );
    let slack = measured_uncertainty(&s.run) + s.truth.shape.tick_ns() + 1_000;
    check(&s, slack);
}

// Paced so that an Intel-like run lasts past the wrap, a second after the layer loaded.
const ONE_TIME: &[(&str, &str)] = &[("--pace-ms", "500")];
const RESUBMITTED: &[(&str, &str)] = &[("--frames", "30"), ("--pace-ms", "40")];
const FRAMES: &[(&str, &str)] = &[("--frames", "30"), ("--pace-ms", "40")];

#[test]
fn intel_one_time() {
    intel("basic", ONE_TIME, true);
}
#[test]
fn intel_resubmitted() {
    intel("resubmit", RESUBMITTED, true);
}
#[test]
fn intel_secondaries() {
    intel("secondary-reuse", ONE_TIME, true);
}
#[test]
fn intel_frames() {
    intel("frames", FRAMES, true);
}
#[test]
fn intel_threads() {
    intel("threads", &[], false);
}

#[test]
fn amd_one_time() {
    amd("basic", &[]);
}
#[test]
fn amd_resubmitted() {
    let s = shaped("amd", "resubmit", &[("--frames", "30")]);
    check(&s, calibrated_slack(&s));
    // A GPU (not Lavapipe's CPU device type): a resubmission that finds its last run
    // unread reads it on the host (the workload resubmits as soon as its fence signals,
    // tens of µs later on a slow machine, well within traceq's first millisecond asleep,
    // which is the layer's clock: one of 29 resubmissions must, not all), none is saved by
    // the GPU.
    let counts = s
        .run
        .stderr
        .lines()
        .find(|l| l.contains("reusable runs read at their resubmission"))
        .unwrap_or_else(|| panic!("the queue's counts: {}", s.run.stderr));
    assert!(
        counts.contains(", 0 saved by the GPU") && !counts.contains("(0 reusable runs read"),
        "{counts}"
    );
}
#[test]
fn amd_secondaries() {
    amd("secondary-reuse", &[]);
}
#[test]
fn amd_frames() {
    amd("frames", &[("--frames", "10")]);
}
#[test]
fn amd_threads() {
    amd("threads", &[]);
}

/// The AMD shape's transfer-only family (no timestamps) beside the traced queue: its
/// submission is counted but makes no batch, and the graphics submission that waits for
/// it is traced as usual.
#[test]
fn amd_transfer_queue() {
    let s = shaped("amd", "transfer-queue", &[]);
    check(&s, calibrated_slack(&s));
    let batches = &s.txt.batches;
    assert_eq!(
        batches.len(),
        1,
        "only the graphics queue's submission: {batches:#?}"
    );
    assert_eq!(
        batches[0].submission, 2,
        "the transfer submission was the first"
    );
}

/// The AMD shape's compute family (no graphics), traced on its own queue beside the
/// untraced transfer family: one batch, its times true to the shape's ticks.
#[test]
fn amd_compute_queue() {
    let s = shaped("amd", "compute-queue", &[]);
    check(&s, calibrated_slack(&s));
    assert_eq!(s.txt.batches.len(), 1, "{:#?}", s.txt.batches);
}

#[test]
fn v1_1_one_time() {
    v1_1("basic", &[]);
}
#[test]
fn v1_1_resubmitted() {
    v1_1("resubmit", &[("--frames", "10")]);
}
#[test]
fn v1_1_secondaries() {
    v1_1("secondary-reuse", &[]);
}
#[test]
fn v1_1_frames() {
    v1_1("frames", &[("--frames", "10")]);
}
#[test]
fn v1_1_threads() {
    v1_1("threads", &[]);
}
