//! `utrace convert` on a trace the layer wrote on Lavapipe: Chrome's trace events (one
//! complete event per range), the layer's json and csv and Mesa's csv from a txt trace, and
//! an unwritable output (one line, status 2, nothing left behind). Byte-exact output is the
//! golden files' job (cli/src/commands/convert/golden.rs).

use std::path::Path;
use std::process::{Command, Output};

use utrace_tests::checks::assert_clean;
use utrace_tests::harness::{utrace_exe, TempDir};
use utrace_tests::workload;

fn utrace(args: &[&str], paths: &[&Path]) -> Output {
    let mut cmd = Command::new(utrace_exe());
    cmd.args(args);
    for p in paths {
        cmd.arg(p);
    }
    cmd.output().expect("utrace runs")
}

/// The sum of `report --json` counts, and the rows.
fn ranges(trace: &Path) -> (u64, serde_json::Value) {
    let out = utrace(&["report", "--json"], &[trace]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["count"].as_u64().unwrap())
        .sum();
    (n, v["rows"].clone())
}

#[test]
fn a_lavapipe_trace_converts_to_every_format() {
    let dir = TempDir::new("cli-convert");
    let txt = dir.path().join("trace.txt");
    let run = workload!("demo")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", txt.to_str().unwrap())
        .env("GPU_TRACE_FORMAT", "txt")
        .run(&dir);
    assert_clean(&run);
    let (count, rows) = ranges(&txt);

    let chrome = dir.path().join("trace.chrome.json");
    let out = utrace(&["convert", "--to", "chrome", "-o"], &[&chrome, &txt]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&chrome).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    assert_eq!(
        events.iter().filter(|e| e["ph"] == "X").count() as u64,
        count
    );
    assert!(events
        .iter()
        .any(|e| e["ph"] == "M" && e["name"] == "thread_name"));
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "X" && e["name"] == "scene"),
        "labels by name"
    );

    for (to, name) in [("json", "t.json"), ("csv", "t.csv")] {
        let path = dir.path().join(name);
        let out = utrace(&["convert", "--to", to, "-o"], &[&path, &txt]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            ranges(&path).1,
            rows,
            "{to}: the same ranges, the same times"
        );
    }
    // The layer's json layout: its fields in its order (the unit tests hold the rest).
    let json = std::fs::read_to_string(dir.path().join("t.json")).unwrap();
    // The trace's header first, then the batches.
    assert!(
        json.starts_with("{\"type\":\"trace\",\"device\":0,\"utrace\":"),
        "{json}"
    );
    assert!(
        json.contains("\n{\"type\":\"batch\",\"device\":0,\"batch\":1,\"queue\":\"0x")
            && json.contains("\"events\":[{\"ns\":"),
        "{json}"
    );
    let mesa = dir.path().join("t.mesa.csv");
    let out = utrace(&["convert", "--to", "mesa-csv", "-o"], &[&mesa, &txt]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(&mesa).unwrap();
    assert!(
        text.starts_with("frame,batch,time_ns,event,\n0,0,"),
        "{text}"
    );
    let events_in_txt = std::fs::read_to_string(&txt)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .count(),
        events_in_txt
    );

    // A csv trace of the layer's converted to csv is the layer's own, byte for byte, but
    // for the end_of_trace row (whose `dropped` a trace read does not keep).
    let csv = dir.path().join("layer.csv");
    let run = workload!("demo")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", csv.to_str().unwrap())
        .env("GPU_TRACE_FORMAT", "csv")
        .run(&dir);
    assert_clean(&run);
    let again = dir.path().join("again.csv");
    let out = utrace(&["convert", "--to", "csv", "-o"], &[&again, &csv]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let layer = std::fs::read_to_string(&csv).unwrap();
    let layer: String = layer
        .lines()
        .filter(|l| !l.contains(",end_of_trace,"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), layer);

    // An output that cannot be written: one line, status 2, no partial file.
    let bad = dir.path().join("no/such/dir/out.json");
    let out = utrace(&["convert", "--to", "chrome", "-o"], &[&bad, &txt]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no/such/dir"), "{err}");
    let out = utrace(&["convert", "--to", "xml", "-o"], &[&bad, &txt]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn deeply_nested_labels_convert_to_perfetto_in_linear_time() {
    // 200,000 nested labels: each stage used to look down the whole stack of open ranges
    // for its command buffer, render pass and framebuffer (20,000 took 7 s in a debug
    // build, this many would take about 12 minutes); now about 2 s here. The limit is a
    // guard far above that, scaled for slow machines (UTRACE_TEST_TIME_FACTOR).
    let dir = TempDir::new("cli-convert-nested");
    let txt = dir.path().join("nested.txt");
    std::fs::write(&txt, utrace_tests::bench::convert::nested_labels(200_000)).unwrap();
    let out_path = dir.path().join("nested.pftrace");
    let mut child = Command::new(utrace_exe())
        .args(["convert", "--to", "perfetto", "-o"])
        .arg(&out_path)
        .arg(&txt)
        .spawn()
        .expect("utrace runs");
    let limit = std::time::Duration::from_secs(60) * utrace_tests::harness::time_factor();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("converting 200,000 nested labels took more than {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success());
    let trace = utrace_tests::perfetto_trace::read(&out_path);
    assert_eq!(
        trace.stages.len(),
        200_001,
        "every label and the command buffer"
    );
    assert!(
        trace.stages.iter().all(|s| s.command_buffer == 0x10),
        "each label inherits its command buffer"
    );
}
