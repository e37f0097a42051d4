//! Every text format starts each device's part with its header: the build, the process,
//! the device and driver, the application, the settings in effect (docs/formats.md). Here
//! read by the tests' own readers (txt's strict one checks it on every txt trace the suite
//! parses), and by `utrace report`, which shows it in one line on top.

use std::process::Command;

use utrace_tests::checks::{assert_clean, parse};
use utrace_tests::harness::{utrace_exe, TempDir};
use utrace_tests::workload;

/// The basic scenario traced to `name` in `dir`, with `envs`; the file's text.
fn traced(dir: &TempDir, name: &str, envs: &[(&str, &str)]) -> String {
    let path = dir.path().join(name);
    let mut w = workload!("basic")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", path.to_str().unwrap());
    for (k, v) in envs {
        w = w.env(k, *v);
    }
    let run = w.run(dir);
    assert_clean(&run);
    std::fs::read_to_string(&path).unwrap()
}

const SETTINGS: [(&str, &str); 3] = [
    ("GPU_TRACEPOINTS", "+barrier,-draw"),
    ("GPU_TRACE_COUNTERS", "pipeline"),
    ("GPU_TRACE_FRAMES", "0-5"),
];

#[test]
fn txt_json_and_csv_say_the_same_origin_first() {
    let dir = TempDir::new("header-formats");
    let txt = traced(&dir, "t.txt", &SETTINGS);
    let trace = parse(&txt);
    let get = |k| trace.header(0, k).unwrap_or_default().to_string();
    // Settings as they apply, whatever order they were written in: the spec's order.
    assert_eq!(get("tracepoints"), "-draw,+barrier");
    assert_eq!(get("counters"), "pipeline");
    assert_eq!(get("frames"), "0-5");
    assert_eq!(get("app_name"), "utrace-workload");
    assert_eq!(get("process"), "utrace-workload");
    assert!(get("device_name").starts_with("llvmpipe"), "{txt}");
    assert!(get("driver_info").starts_with("Mesa "), "{txt}");
    assert!(get("started").ends_with('Z') && get("started").len() == 24);

    let json = traced(&dir, "t.json", &SETTINGS);
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "trace", "{json}");
    assert_eq!(first["device"], 0);
    assert_eq!(first["format"], "json");
    assert!(
        first["pid"].as_u64().is_some(),
        "numbers stay numbers: {first}"
    );
    for key in [
        "device_name",
        "driver_info",
        "driver_version",
        "tracepoints",
        "counters",
    ] {
        assert_eq!(first[key].as_str(), trace.header(0, key), "{key}");
    }

    let csv = traced(&dir, "t.csv", &SETTINGS);
    let mut lines = csv.lines();
    assert!(
        lines.next().unwrap().starts_with("device,batch,"),
        "the column header first"
    );
    let row = lines.next().unwrap();
    assert!(row.starts_with("0,,,,,,,,,trace,\""), "{row}");
    assert!(
        row.contains("format=\"\"csv\"\"") && row.contains("tracepoints=\"\"-draw,+barrier\"\""),
        "{row}"
    );
    let columns = csv.lines().next().unwrap().split(',').count();
    let second = csv.lines().nth(2).unwrap();
    // The header row has as many columns as the others (the counters' ones empty).
    let count = |l: &str| {
        let mut n = 1;
        let mut quoted = false;
        for c in l.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => n += 1,
                _ => {}
            }
        }
        n
    };
    assert_eq!(count(row), columns);
    assert_eq!(count(second), columns);
}

#[test]
fn report_shows_the_origin_in_one_line_for_every_format() {
    let dir = TempDir::new("header-report");
    for name in ["r.txt", "r.json", "r.csv"] {
        traced(&dir, name, &[]);
        let out = Command::new(utrace_exe())
            .arg("report")
            .arg(dir.path().join(name))
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("from: device 0 · llvmpipe")
                && first.contains("utrace-workload (pid ")
                && first.contains(&format!("utrace {} (commit ", env!("CARGO_PKG_VERSION"))),
            "{name}: {first}"
        );
        assert!(
            !first.contains("tracepoints"),
            "defaults are not repeated: {first}"
        );
        let json = Command::new(utrace_exe())
            .args(["report", "--json"])
            .arg(dir.path().join(name))
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(
            v["origins"][0]["fields"]["app_name"], "utrace-workload",
            "{name}"
        );
    }
}

/// `utrace report --json`'s origins of the trace at `path`.
fn origins(path: &std::path::Path) -> serde_json::Value {
    let out = Command::new(utrace_exe())
        .args(["report", "--json"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["origins"].clone()
}

#[test]
fn converted_traces_keep_the_header_they_came_with() {
    let dir = TempDir::new("header-convert");
    traced(&dir, "c.txt", &SETTINGS);
    let original = origins(&dir.path().join("c.txt"));
    assert_eq!(original.as_array().map(Vec::len), Some(1), "{original}");
    // txt to json to csv: every field the same, the format it was traced in included.
    let mut from = dir.path().join("c.txt");
    for to in ["json", "csv"] {
        let out = dir.path().join(format!("c.{to}"));
        let status = Command::new(utrace_exe())
            .arg("convert")
            .arg(&from)
            .args(["--to", to, "-o"])
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(origins(&out), original, "{to}");
        from = out;
    }
    assert_eq!(original[0]["fields"]["format"], "txt");
}

#[test]
fn perfetto_traces_carry_the_header_as_the_devices_gpu_info() {
    let dir = TempDir::new("header-perfetto");
    let path = dir.path().join("p.pftrace");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", path.to_str().unwrap())
        .env("GPU_TRACEPOINTS", "-draw")
        .run(&dir);
    assert_clean(&run);
    let bytes = std::fs::read(&path).unwrap();
    let trace = utrace_tests::perfetto_trace::decode(&bytes).unwrap();
    let gpus: Vec<_> = trace
        .packet
        .iter()
        .filter_map(|p| p.gpu_info.as_ref())
        .flat_map(|i| &i.gpus)
        .collect();
    assert!(!gpus.is_empty(), "a gpu_info packet");
    let gpu = gpus[0];
    let extra = |k: &str| {
        gpu.extra_info
            .iter()
            .find(|kv| kv.key.as_deref() == Some(k))
            .and_then(|kv| kv.value.clone())
    };
    assert_eq!(extra("device").as_deref(), Some("0"));
    assert_eq!(extra("format").as_deref(), Some("perfetto"));
    assert_eq!(extra("tracepoints").as_deref(), Some("-draw"));
    assert_eq!(gpu.name, extra("device_name"));
    // The process's descriptor, as Perfetto's UI names process tracks.
    let process = trace
        .packet
        .iter()
        .filter_map(|p| p.track_descriptor.as_ref()?.process.as_ref())
        .next()
        .expect("a process descriptor");
    assert_eq!(process.process_name.as_deref(), Some("utrace-workload"));
    assert_eq!(process.pid.map(|p| p.to_string()), extra("pid"));
    assert!(gpu
        .name
        .as_deref()
        .unwrap_or_default()
        .starts_with("llvmpipe"));
    // The command reads it back, and writes it again when converting to Perfetto.
    let read = origins(&path);
    assert_eq!(read[0]["fields"]["format"], "perfetto");
    let txt = dir.path().join("p.txt");
    traced(&dir, "p.txt", &[]);
    let converted = dir.path().join("c.pftrace");
    let status = Command::new(utrace_exe())
        .arg("convert")
        .arg(&txt)
        .args(["--to", "perfetto", "-o"])
        .arg(&converted)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(origins(&converted), origins(&txt));
}
