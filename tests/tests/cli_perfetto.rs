//! `utrace` on Perfetto traces: the Perfetto trace of a run reports the same ranges as the
//! txt trace of a run of the same workload, a file cut short is reported as far as it goes,
//! a txt trace converted to Perfetto reads back with the same ranges, and a presented run's
//! Perfetto trace has the frames of its txt trace (report and view).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use utrace_tests::checks::{assert_clean, assert_trace_matches, report_rows};
use utrace_tests::harness::{utrace_exe, TempDir, XServer};
use utrace_tests::perfetto_trace;
use utrace_tests::stage_ranges::{perfetto_ranges, txt_ranges, Range};
use utrace_tests::view_page::{body_attribute, load};
use utrace_tests::workload;

/// The `utrace` command of this build (scripts/test.sh builds it with the layer).
fn utrace() -> Command {
    Command::new(utrace_exe())
}

/// Runs `utrace args...` and asserts it succeeded.
fn utrace_ok(args: &[&std::ffi::OsStr]) {
    let out = utrace().args(args).output().expect("utrace runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn report(trace: &Path) -> Output {
    utrace()
        .args(["report", "--json"])
        .arg(trace)
        .output()
        .expect("utrace runs")
}

/// Runs the demo scenario traced to `dir/name` (the format told by the name, as a user
/// would: `.pftrace` is Perfetto).
fn trace(dir: &TempDir, name: &str) -> PathBuf {
    let path = dir.path().join(name);
    let run = workload!("demo")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", path.to_str().expect("a UTF-8 path"))
        .run(dir);
    assert_clean(&run);
    path
}

/// `at`, or the next byte if a packet starts there (packets are field 1, length-delimited).
fn inside_a_packet(bytes: &[u8], at: usize) -> usize {
    let mut start = 0;
    while start < at {
        let (mut len, mut i, mut shift) = (0usize, start + 1, 0);
        while let Some(&b) = bytes.get(i) {
            len |= usize::from(b & 0x7f) << shift;
            i += 1;
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        start = i + len;
    }
    if start == at {
        at + 1
    } else {
        at
    }
}

/// (key, count) of each row of `report --json`, and its unpaired events.
fn counts(out: &Output) -> (Vec<(String, u64)>, u64) {
    let (v, rows) = report_rows(out);
    (
        rows,
        v["unpaired_events"].as_u64().expect("unpaired_events"),
    )
}

#[test]
fn a_perfetto_trace_reports_the_ranges_of_a_txt_trace() {
    let dir = TempDir::new("cli-perfetto");
    let pftrace = trace(&dir, "trace.pftrace");
    let txt = trace(&dir, "trace.txt");
    let bytes = std::fs::read(&pftrace).unwrap();
    assert_eq!(bytes[0], 0x0a, "a Perfetto trace: its first packet");
    let (want, unpaired) = counts(&report(&txt));
    assert_eq!(unpaired, 0);
    for range in ["cmd_buffer", "render_pass", "draw", "dispatch", "label"] {
        assert!(want.iter().any(|(k, _)| k == range), "{range}: {want:?}");
    }
    let out = report(&pftrace);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(counts(&out), (want.clone(), 0), "Perfetto");

    // Cut inside the trace (inside a packet: a cut between two packets is a shorter whole
    // trace): read as far as it goes, with a note; never more ranges.
    let cut = dir.path().join("cut.pftrace");
    std::fs::write(&cut, &bytes[..inside_a_packet(&bytes, bytes.len() * 2 / 3)]).unwrap();
    let out = report(&cut);
    let (got, _) = counts(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cut short"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let total = |rows: &[(String, u64)]| rows.iter().map(|r| r.1).sum::<u64>();
    assert!(total(&got) > 0 && total(&got) < total(&want), "{got:?}");
}

#[test]
fn a_txt_trace_converted_to_perfetto_reads_back_the_same() {
    let dir = TempDir::new("cli-perfetto-convert");
    let txt = trace(&dir, "trace.txt");
    let converted = dir.path().join("converted.pftrace");
    utrace_ok(&[
        "convert".as_ref(),
        txt.as_os_str(),
        "--to".as_ref(),
        "perfetto".as_ref(),
        "-o".as_ref(),
        converted.as_os_str(),
    ]);
    // Sound as a trace processor resolves it (the tests' own decoder): every stage's queue,
    // stage and context interned on its sequence, one stage per range.
    let resolved = utrace_tests::perfetto_trace::read(&converted);
    let want = counts(&report(&txt));
    assert_eq!(
        resolved.stages.len() as u64,
        want.0.iter().map(|r| r.1).sum::<u64>(),
        "the demo has no markers"
    );
    let back = report(&converted);
    assert!(
        back.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&back.stderr)
    );
    assert_eq!(counts(&back), want);
    // Each batch's frame went along (the demo without a window: all frame 0).
    assert!(resolved.stages.iter().all(|s| s.frame == Some(0)));
}

/// A presented run (the `frames` scenario on Xvfb) traced to txt (stdout) and Perfetto at
/// once: every Perfetto stage carries its txt batch's frame, `report --json` gives the
/// Perfetto trace the txt trace's per-frame numbers, and its `utrace view` page draws a
/// frame bar per frame (older layers' Perfetto traces were all frame 0: one bar).
#[test]
fn a_presented_runs_perfetto_trace_has_the_frames_of_its_txt_trace() {
    const FRAMES: u32 = 6;
    let x = XServer::start();
    let dir = TempDir::new("cli-perfetto-frames");
    let pftrace = dir.path().join("trace.pftrace");
    let run = workload!("frames")
        .arg("--frames", &FRAMES.to_string())
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE_FORMAT", "txt,perfetto")
        .env("GPU_TRACEFILE", pftrace.to_str().expect("a UTF-8 path"))
        .env("DISPLAY", &x.display)
        .run(&dir);
    assert_clean(&run);
    assert_eq!(run.report().presents, FRAMES);
    let txt = assert_trace_matches(&run.stdout, &run);
    let frames: Vec<u32> = txt.batches.iter().map(|b| b.frame).collect();
    assert_eq!(frames, (0..FRAMES).collect::<Vec<_>>());

    // Stage for stage (the tests' own decoder), each in its txt batch's frame.
    let names = perfetto_trace::stage_names();
    let mut want: Vec<Range> = txt
        .batches
        .iter()
        .flat_map(|b| txt_ranges(b, &names))
        .collect();
    let mut got = perfetto_ranges(&perfetto_trace::read(&pftrace).stages);
    want.sort();
    got.sort();
    assert_eq!(got, want);

    // The command: the same frames, each with the same GPU time and ranges.
    let txt_path = dir.path().join("trace.txt");
    std::fs::write(&txt_path, &run.stdout).unwrap();
    let per_frame = |trace: &Path| {
        let out = utrace()
            .args(["report", "--json", "--by", "frame"])
            .arg(trace)
            .output()
            .expect("utrace runs");
        let (v, keys) = report_rows(&out);
        (keys, v["rows"].clone(), v["frames"].clone())
    };
    let want = per_frame(&txt_path);
    assert_eq!(want.2["count"], FRAMES, "{want:?}");
    let keys: Vec<String> = want.0.iter().map(|(k, _)| k.clone()).collect();
    let mut frame_keys: Vec<String> = (0..FRAMES).map(|f| format!("frame {f}")).collect();
    frame_keys.sort();
    assert_eq!(keys, frame_keys);
    assert_eq!(per_frame(&pftrace), want, "Perfetto = txt, frame for frame");

    let page = dir.path().join("frames.html");
    utrace_ok(&[
        "view".as_ref(),
        "-o".as_ref(),
        page.as_os_str(),
        pftrace.as_os_str(),
    ]);
    let dom = load(&dir, &page, "");
    assert_eq!(
        body_attribute(&dom, "data-frame-bars"),
        Some(u64::from(FRAMES)),
        "one frame bar per frame"
    );
}
