//! `utrace report` on traces the layer wrote on Lavapipe: every range counted once, in every
//! text format, and the command's errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use utrace_tests::checks::{assert_clean, kind, parse, report_rows, Kind};
use utrace_tests::harness::{utrace_exe, TempDir};
use utrace_tests::workload;

/// The `utrace` command of this build (scripts/test.sh builds it with the layer).
fn utrace() -> Command {
    Command::new(utrace_exe())
}

fn report(args: &[&str], trace: &Path) -> Output {
    utrace()
        .arg("report")
        .args(args)
        .arg(trace)
        .output()
        .expect("utrace runs")
}

/// Runs the demo scenario with the trace written to a file of `dir` in `format`.
fn trace(dir: &TempDir, format: &str) -> PathBuf {
    let path = dir.path().join(format!("trace.{format}"));
    let run = workload!("demo")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", path.to_str().expect("a UTF-8 path"))
        .env("GPU_TRACE_FORMAT", format)
        .run(dir);
    assert_clean(&run);
    path
}

/// (key, count) of each row of `report --json`, each row's statistics consistent.
fn counts(out: &Output) -> Vec<(String, u64)> {
    let (v, rows) = report_rows(out);
    for r in v["rows"].as_array().expect("rows") {
        let (p50, p90) = (r["p50_ns"].as_u64().unwrap(), r["p90_ns"].as_u64().unwrap());
        let (p99, max) = (r["p99_ns"].as_u64().unwrap(), r["max_ns"].as_u64().unwrap());
        assert!(p50 <= p90 && p90 <= p99 && p99 <= max, "{r}");
        let (count, total) = (
            r["count"].as_u64().unwrap(),
            r["total_ns"].as_u64().unwrap(),
        );
        assert_eq!(r["mean_ns"].as_u64().unwrap(), total / count, "{r}");
    }
    rows
}

#[test]
fn every_range_is_counted_once_in_every_format() {
    let dir = TempDir::new("cli-report");
    let txt = trace(&dir, "txt");
    // The ranges as the tests' own strict reader of the txt format sees them: one per begin.
    let parsed = parse(&std::fs::read_to_string(&txt).unwrap());
    let mut want: Vec<(String, u64)> = Vec::new();
    for e in parsed.batches.iter().flat_map(|b| &b.events) {
        if let Kind::Begin(range) = kind(&e.name) {
            match want.iter_mut().find(|(k, _)| k == range) {
                Some((_, n)) => *n += 1,
                None => want.push((range.to_string(), 1)),
            }
        }
    }
    want.sort();
    assert!(want.iter().any(|(k, _)| k == "label") && want.iter().any(|(k, _)| k == "draw"));
    assert_eq!(counts(&report(&["--json"], &txt)), want, "txt");
    // The same workload in the other formats: the same ranges (their times differ).
    for format in ["json", "csv"] {
        let path = trace(&dir, format);
        assert_eq!(counts(&report(&["--json"], &path)), want, "{format}");
    }

    let table = report(&["--top", "2"], &txt);
    assert!(table.status.success());
    let text = String::from_utf8_lossy(&table.stdout);
    // Where the trace comes from, then the table.
    assert!(text.starts_with("from: device 0 · "), "{text}");
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert!(
        lines[0].starts_with("range") && lines[1].starts_with("cmd_buffer"),
        "{text}"
    );
    assert!(lines[3].is_empty(), "two rows: {text}");
    let mut frames: Vec<u32> = parsed.batches.iter().map(|b| b.frame).collect();
    frames.dedup();
    assert!(
        text.contains(&format!("frames: {},", frames.len())),
        "{text}"
    );

    // From submit to the GPU starting each batch: the tests' reader's figures, summarised.
    let mut latencies: Vec<u64> = parsed
        .batches
        .iter()
        .map(|b| {
            b.events[0]
                .ns
                .saturating_sub(b.submitted.expect("a submit time"))
        })
        .collect();
    latencies.sort();
    let (v, _) = report_rows(&report(&["--json"], &txt));
    let l = &v["submit_latency"];
    assert_eq!(
        l["count"].as_u64(),
        Some(parsed.batches.len() as u64),
        "{l}"
    );
    assert_eq!(l["min_ns"].as_u64(), latencies.first().copied(), "{l}");
    assert_eq!(l["max_ns"].as_u64(), latencies.last().copied(), "{l}");
    assert!(
        text.contains(&format!(
            "submit to GPU start µs ({} batches)",
            latencies.len()
        )),
        "{text}"
    );

    let labels = counts(&report(&["--json", "--by", "label"], &txt));
    let label_ranges = want.iter().find(|(k, _)| k == "label").unwrap().1;
    assert_eq!(
        labels.iter().map(|(_, n)| n).sum::<u64>(),
        label_ranges,
        "{labels:?}"
    );
}

#[test]
fn bad_input_gets_one_line_and_a_failure() {
    let dir = TempDir::new("cli-bad");
    let missing = dir.path().join("missing.txt");
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let garbage = dir.path().join("garbage.bin");
    std::fs::write(&garbage, b"\x0a\x0bnot a trace\n").unwrap();
    let no_batch = dir.path().join("end.txt");
    std::fs::write(
        &no_batch,
        "END OF TRACE: device=0 batches=0 events=0 dropped=0\n",
    )
    .unwrap();
    for (path, says) in [
        (&missing, "No such file"),
        (&empty, "empty"),
        (&garbage, "not a trace"),
        (&no_batch, "no batch"),
    ] {
        let out = report(&[], path);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(says) && err.contains(path.to_str().unwrap()),
            "{err}"
        );
    }
    let out = report(&["--by", "nonsense"], &missing);
    assert!(!out.status.success());
}

#[test]
fn a_trace_cut_short_is_reported_as_far_as_it_goes() {
    let dir = TempDir::new("cli-cut");
    let txt = trace(&dir, "txt");
    let text = std::fs::read_to_string(&txt).unwrap();
    // Cut inside the last batch, after an event line.
    let last_batch = text.rfind("BATCH ").unwrap();
    let cut_at = last_batch + text[last_batch..].find('\n').unwrap() + 1;
    let cut_at = cut_at + text[cut_at..].find('\n').unwrap() + 1;
    let cut_at = cut_at + text[cut_at..].find('\n').unwrap() + 1;
    let cut = dir.path().join("cut.txt");
    std::fs::write(&cut, &text[..cut_at]).unwrap();
    let out = report(&["--json"], &cut);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cut short"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["unpaired_events"].as_u64().unwrap() >= 1,
        "the open begin is counted: {v}"
    );
}

/// The begins named `name` in a parsed txt trace, those whose arguments pass `keep`.
fn begins(trace: &utrace_tests::trace_txt::Trace, name: &str, keep: impl Fn(&str) -> bool) -> u64 {
    trace
        .batches
        .iter()
        .flat_map(|b| &b.events)
        .filter(|e| e.name == name && keep(&format!("{:?}", e.args)))
        .count() as u64
}

#[test]
fn groupings_by_pipeline_thread_frame_and_render_pass_follow_the_trace() {
    let dir = TempDir::new("cli-groupings");
    let path = dir.path().join("trace.txt");
    let run = workload!("demo")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", path.to_str().unwrap())
        .env("GPU_TRACE_FORMAT", "txt")
        .run(&dir);
    assert_clean(&run);
    let parsed = parse(&std::fs::read_to_string(&path).unwrap());
    let dispatches = begins(&parsed, "start_dispatch", |_| true);
    let draws = begins(&parsed, "start_draw", |_| true);
    let primaries = begins(&parsed, "start_cmd_buffer", |a| a.contains("\"primary\""));
    let passes = begins(&parsed, "start_render_pass", |_| true);
    assert!(dispatches > 0 && draws > 0 && primaries > 0 && passes > 0);

    // The demo names its compute pipeline and not its graphics one.
    let pipelines = counts(&report(&["--json", "--by", "pipeline"], &path));
    assert_eq!(pipelines.len(), 2, "{pipelines:?}");
    assert!(pipelines.contains(&("fill compute".to_string(), dispatches)));
    let unnamed = pipelines.iter().find(|(k, _)| k != "fill compute").unwrap();
    assert!(
        unnamed.0.starts_with("0x") && unnamed.1 == draws,
        "{pipelines:?}"
    );

    let threads = counts(&report(&["--json", "--by", "thread"], &path));
    let tid = run.report().main_thread;
    assert_eq!(threads, [(format!("thread {tid}"), primaries)]);
    let frames = counts(&report(&["--json", "--by", "frame"], &path));
    assert_eq!(
        frames,
        [("frame 0".to_string(), primaries)],
        "headless: one frame"
    );
    let render_passes = counts(&report(&["--json", "--by", "render_pass"], &path));
    assert_eq!(render_passes.iter().map(|(_, n)| n).sum::<u64>(), passes);
    assert!(render_passes
        .iter()
        .all(|(k, _)| k.starts_with("render pass 0x")));

    // Queues, frames and the longest ranges.
    let out = report(&["--json", "--longest", "3"], &path);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let queues = v["queues"].as_array().unwrap();
    assert_eq!(queues.len(), 1, "{v}");
    assert_eq!(queues[0]["busy_ns"], v["busy_ns"]);
    let histogram = v["frames"]["histogram"].as_array().unwrap();
    let in_buckets: u64 = histogram.iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(in_buckets, v["frames"]["count"].as_u64().unwrap());
    let longest: Vec<u64> = v["longest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["duration_ns"].as_u64().unwrap())
        .collect();
    let max = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["max_ns"].as_u64().unwrap())
        .max();
    assert_eq!(longest.len(), 3);
    assert!(longest.windows(2).all(|w| w[0] >= w[1]), "{longest:?}");
    assert_eq!(
        longest.first().copied(),
        max,
        "the longest range is the longest of all"
    );
    let text = report(&[], &path);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("longest ranges:") && text.contains("busy"),
        "{text}"
    );
}
