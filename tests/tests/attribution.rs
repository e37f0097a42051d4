//! Attribution: which pipeline did a draw's or dispatch's work (its handle, and the name the
//! application gave it), which thread submitted each batch and which recorded each command
//! buffer, in every format. The demo scenario names its compute pipeline "fill compute" and
//! leaves its graphics pipeline unnamed; it records and submits on its main thread.

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::harness::{Run, TempDir};
use utrace_tests::perfetto_trace;
use utrace_tests::workload;

const LAYERS: &[&str] = &["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"];
const NAMED: &str = "fill compute";

fn demo(dir: &TempDir, format: &str, file: Option<&std::path::Path>) -> Run {
    let mut w = workload!("demo")
        .layers(LAYERS)
        .env("GPU_TRACE_FORMAT", format);
    if let Some(file) = file {
        w = w.env("GPU_TRACEFILE", file.to_str().expect("a UTF-8 path"));
    }
    let run = w.run(dir);
    assert_clean(&run);
    run
}

fn is_handle(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.starts_with("0x") && v != "0x0")
}

#[test]
fn txt_and_perfetto_name_pipelines_and_threads() {
    let dir = TempDir::new("attribution-txt");
    let file = dir.path().join("gpu.pftrace");
    let run = demo(&dir, "txt,perfetto", Some(&file));
    let tid = run.report().main_thread;
    assert!(tid > 0);
    let txt = assert_trace_matches(&run.stdout, &run);
    let (mut dispatches, mut draws) = (0, 0);
    for b in &txt.batches {
        assert_eq!(b.thread, tid, "batch {}: the submitting thread", b.number);
        for e in &b.events {
            match e.name.as_str() {
                "start_cmd_buffer" => {
                    assert_eq!(e.arg("thread"), Some(tid.to_string().as_str()), "{e:?}")
                }
                "start_dispatch" => {
                    dispatches += 1;
                    assert!(is_handle(e.arg("pipeline")), "{e:?}");
                    assert_eq!(e.arg("pipeline_name"), Some(NAMED), "{e:?}");
                }
                "start_draw" => {
                    draws += 1;
                    assert!(is_handle(e.arg("pipeline")), "{e:?}");
                    assert_eq!(e.arg("pipeline_name"), None, "unnamed: {e:?}");
                }
                _ => {}
            }
        }
    }
    assert!(dispatches > 0 && draws > 0, "{dispatches} {draws}");

    // Perfetto: the same on the stages' extra data, and the submissions on their thread.
    let trace = perfetto_trace::read(&file);
    let arg = |s: &perfetto_trace::Stage, k: &str| {
        s.args
            .iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.clone())
    };
    let dispatch_stages: Vec<_> = trace
        .stages
        .iter()
        .filter(|s| s.name == "Dispatch")
        .collect();
    assert_eq!(dispatch_stages.len(), dispatches);
    for s in dispatch_stages {
        assert!(is_handle(arg(s, "pipeline").as_deref()), "{s:?}");
        assert_eq!(arg(s, "pipeline_name").as_deref(), Some(NAMED), "{s:?}");
    }
    assert!(!trace.submits.is_empty());
    for s in &trace.submits {
        assert_eq!(s.tid, tid, "{s:?}");
    }
}

#[test]
fn json_and_csv_name_pipelines_and_threads() {
    let dir = TempDir::new("attribution-json");
    let json_file = dir.path().join("gpu.json");
    let run = demo(&dir, "json", Some(&json_file));
    let tid = u64::from(run.report().main_thread);
    let text = std::fs::read_to_string(&json_file).unwrap();
    let batches: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "batch")
        .collect();
    assert!(!batches.is_empty());
    let mut named = 0;
    for b in &batches {
        assert_eq!(b["thread"].as_u64(), Some(tid), "{b}");
        for e in b["events"].as_array().unwrap() {
            if e["name"] == "start_dispatch" {
                assert_eq!(e["args"]["pipeline_name"], NAMED, "{e}");
                named += 1;
            }
            if e["name"] == "start_cmd_buffer" {
                assert_eq!(e["args"]["thread"].as_u64(), Some(tid), "{e}");
            }
        }
    }
    assert!(named > 0);

    let csv_file = dir.path().join("gpu.csv");
    let run = demo(&dir, "csv", Some(&csv_file));
    let tid = run.report().main_thread.to_string();
    let text = std::fs::read_to_string(&csv_file).unwrap();
    let mut rows = text.lines();
    assert_eq!(
        rows.next(),
        Some("device,batch,frame,submission,thread,submitted,ns,delta,depth,event,args")
    );
    // The events' rows: not the device's header (`trace`) nor its end.
    let events: Vec<&str> = rows
        .filter(|r| !matches!(r.split(',').nth(9), Some("trace" | "end_of_trace")))
        .collect();
    assert!(!events.is_empty());
    for r in &events {
        assert_eq!(r.split(',').nth(4), Some(tid.as_str()), "{r}");
    }
    let dispatches: Vec<&&str> = events
        .iter()
        .filter(|r| r.contains(",start_dispatch,"))
        .collect();
    assert!(!dispatches.is_empty());
    for r in dispatches {
        assert!(
            r.ends_with(&format!(", pipeline_name=\"\"{NAMED}\"\"\"")),
            "{r}"
        );
    }
}
