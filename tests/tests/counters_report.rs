//! `utrace report --counters` on traces made with pipeline statistics, against the tests'
//! own sums, and the same counters through a Perfetto trace.

use utrace_tests::counter_checks::{counters, NAMES};
use utrace_tests::harness::TempDir;
use utrace_tests::workload;

#[test]
fn report_sums_the_counters_of_each_group_as_the_trace_says() {
    let dir = TempDir::new("counters-report");
    let file = traced_to(&dir, "trace.txt");
    let text = std::fs::read_to_string(&file).unwrap();
    let trace = utrace_tests::trace_txt::parse_trace(&text).unwrap();
    // The tests' own sums per range kind, from the end events.
    let mut want: std::collections::BTreeMap<String, [u64; 7]> = Default::default();
    for e in trace.batches.iter().flat_map(|b| &b.events) {
        if let Some(values) = counters(e) {
            let kind = e.name.trim_start_matches("end_");
            let sum = want.entry(kind.to_string()).or_default();
            for (s, v) in sum.iter_mut().zip(values) {
                *s += v;
            }
        }
    }
    let report: serde_json::Value = serde_json::from_slice(&report_of(&file, &["--json"])).unwrap();
    let rows = report["counters"].as_array().expect("the counters' rows");
    assert_eq!(rows.len(), want.len(), "{rows:?} {want:?}");
    for row in rows {
        let key = row["key"].as_str().unwrap();
        let sums = want.get(key).unwrap_or_else(|| panic!("{key}: {want:?}"));
        for (name, sum) in NAMES.iter().zip(sums) {
            // A statistic the group's ranges do not show is null, and 0 in the tests' sum.
            assert_eq!(row[*name].as_u64().unwrap_or(0), *sum, "{key} {name}");
        }
    }
    // The text table has the same rows.
    let text = String::from_utf8(report_of(&file, &[])).unwrap();
    assert!(text.contains("pipeline statistics"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("dispatch_indirect ") && l.contains(" 384 ")),
        "64 + 128 + 192 compute invocations: {text}"
    );
}

#[test]
fn perfetto_stages_carry_the_same_counters() {
    // The counters scenario traced to txt, to Perfetto (its stages' extra_data) and to csv
    // (columns of their own): the command's report of each gives the same sums.
    let dir = TempDir::new("counters-perfetto");
    let sums_of = |file: &std::path::Path| {
        let report: serde_json::Value =
            serde_json::from_slice(&report_of(file, &["--json"])).unwrap();
        let mut rows: Vec<(String, Vec<Option<u64>>)> = report["counters"]
            .as_array()
            .expect("counters")
            .iter()
            .map(|r| {
                let key = r["key"].as_str().unwrap().to_string();
                (key, NAMES.iter().map(|n| r[*n].as_u64()).collect())
            })
            .collect();
        rows.sort();
        rows
    };
    let sums = |name: &str| sums_of(&traced_to(&dir, name));
    let txt = sums("trace.txt");
    assert!(!txt.is_empty());
    assert_eq!(sums("trace.pftrace"), txt);
    // Converted by the command, the counters stay: to Perfetto (the stages' extra_data)
    // and back, and in Chrome's trace events (the ranges' args).
    let converted = dir.path().join("converted.pftrace");
    let out = std::process::Command::new(utrace_tests::harness::utrace_exe())
        .args(["convert", "--to", "perfetto", "-o"])
        .arg(&converted)
        .arg(dir.path().join("trace.txt"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sums_of(&converted), txt, "converted to Perfetto");
    let chrome = dir.path().join("trace.chrome.json");
    let out = std::process::Command::new(utrace_tests::harness::utrace_exe())
        .args(["convert", "--to", "chrome", "-o"])
        .arg(&chrome)
        .arg(dir.path().join("trace.txt"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&chrome).unwrap()).unwrap();
    let dispatch = events["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "dispatch")
        .expect("a dispatch");
    assert_eq!(dispatch["args"]["compute_invocations"], "960", "{dispatch}");
    // csv: a column per statistic and `partial` after `args`, the end row as wide.
    assert_eq!(sums("trace.csv"), txt);
    let csv = std::fs::read_to_string(dir.path().join("trace.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.ends_with(",args,input_vertices,input_primitives,vertex_invocations,clipping_invocations,clipping_primitives,fragment_invocations,compute_invocations,task_invocations,mesh_invocations,partial"),
        "{header}"
    );
    let columns = header.split(',').count();
    let end = csv.lines().last().unwrap();
    assert!(end.contains(",end_of_trace,"), "{end}");
    // Its counts are one quoted field: the commas inside do not separate columns.
    let unquoted: String = end.split('"').step_by(2).collect();
    assert_eq!(unquoted.matches(',').count() + 1, columns, "{end}");
    let dispatch = csv
        .lines()
        .find(|l| l.contains(",end_dispatch,"))
        .expect("a dispatch's end");
    assert!(dispatch.ends_with(",,,,,,,960,,,"), "{dispatch}");
}

/// The counters scenario traced with pipeline statistics to `name` in `dir`.
fn traced_to(dir: &TempDir, name: &str) -> std::path::PathBuf {
    let file = dir.path().join(name);
    let run = workload!("counters")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("GPU_TRACE_COUNTERS", "pipeline")
        .run(dir);
    assert!(run.success, "{}", run.stderr);
    file
}

/// What `utrace report --counters` prints for `file` (`--json` among `extra`).
fn report_of(file: &std::path::Path, extra: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new(utrace_tests::harness::utrace_exe())
        .args(["report", "--counters"])
        .args(extra)
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn perfetto_draws_the_innermost_ranges_counters_as_gpu_counter_tracks() {
    // The counters scenario to Perfetto: a descriptor names the seven statistics (ids 1 to
    // 7, in the text formats' order), and each draw and dispatch sets its statistics at its
    // begin and back to 0 at its end; render passes whose draws are drawn, and command
    // buffers' sums, are not (they would overlap them on the same tracks).
    let dir = TempDir::new("counters-tracks");
    let file = traced_to(&dir, "trace.pftrace");
    let trace = utrace_tests::perfetto_trace::decode(&std::fs::read(&file).unwrap()).unwrap();
    let names = utrace_tests::perfetto_trace::counter_names(&trace);
    let want: Vec<(u32, String)> = NAMES
        .iter()
        .enumerate()
        .map(|(i, n)| (i as u32 + 1, n.to_string()))
        .collect();
    assert_eq!(names, want);
    // The samples of one counter, in order: (time, value).
    let samples = |id: u32| -> Vec<(u64, i64)> {
        utrace_tests::perfetto_trace::counter_samples(&trace, id)
            .iter()
            .map(|(ts, c)| (*ts, c.int_value.unwrap_or(0)))
            .collect()
    };
    // Vertex invocations: the three draws (24, 3, 3), each set then reset.
    let vertices: Vec<i64> = samples(3).iter().map(|s| s.1).collect();
    assert_eq!(vertices, [24, 0, 3, 0, 3, 0]);
    // Compute invocations: the dispatch (960), then the reusable one's runs (64, 128, 192).
    let compute = samples(7);
    let values: Vec<i64> = compute.iter().map(|s| s.1).collect();
    assert_eq!(values, [960, 0, 64, 0, 128, 0, 192, 0]);
    // Each reset comes after its set.
    for pair in compute.chunks(2) {
        assert!(pair[1].0 >= pair[0].0, "{compute:?}");
    }
}
