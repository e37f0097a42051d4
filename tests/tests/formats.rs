//! The json (JSON Lines) and csv formats carry what the txt format does.

use utrace_tests::checks::{assert_clean, parse};
use utrace_tests::harness::{Run, TempDir};
use utrace_tests::workload;

fn run(scenario: &str, format: &str) -> Run {
    let dir = TempDir::new(format);
    let run = workload!(scenario)
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_FORMAT", format)
        .run(&dir);
    assert_clean(&run);
    run
}

#[test]
fn json_lines_hold_every_batch_event_and_argument() {
    let run = run("basic", "json");
    let lines: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let batches: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "batch").collect();
    assert_eq!(batches.len(), 4);
    let subs = &run.report().devices[0].submissions;
    for (b, sub) in batches.iter().zip(subs) {
        let events = b["events"].as_array().unwrap();
        assert_eq!(events.len(), 6);
        assert_eq!(events[0]["name"], "start_cmd_buffer");
        assert_eq!(events[0]["args"]["cmd"], sub.cmdbufs[0].as_str());
        assert_eq!(events[0]["args"]["level"], "primary");
        assert_eq!(events[1]["name"], "start_dispatch");
        assert_eq!(
            events[1]["args"]["group_count_x"], 64,
            "numbers stay numbers"
        );
        assert_eq!(events[1]["depth"], 1);
        assert_eq!(events[3]["args"]["size"], "whole");
        for e in events {
            let ns = e["ns"].as_u64().unwrap();
            assert!(sub.cpu_before_ns <= ns && ns <= sub.cpu_after_ns);
        }
        let first = events[0]["ns"].as_u64().unwrap();
        let last = events[5]["ns"].as_u64().unwrap();
        assert_eq!(b["elapsed_ns"].as_u64().unwrap(), last - first);
    }
    let end = lines.last().unwrap();
    assert_eq!(end["type"], "end_of_trace");
    assert_eq!(end["events"], 24);
}

#[test]
fn json_labels_are_strings_whatever_their_bytes() {
    let run = run("labels", "json");
    let labels: Vec<String> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "batch")
        .flat_map(|b| b["events"].as_array().unwrap().clone())
        .filter(|e| e["name"] == "begin_label")
        .map(|e| e["args"]["label"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(&labels[..3], ["frame", "shadow pass", "cascade 0"]);
    assert!(labels.contains(&"bad \u{fffd}\u{fffd} label".to_string()));
}

#[test]
fn csv_has_a_row_per_event() {
    let csv = run("basic", "csv");
    let txt = run("basic", "txt");
    let rows: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(
        rows[0],
        "device,batch,frame,submission,thread,submitted,ns,delta,depth,event,args"
    );
    let txt = parse(&txt.stdout);
    let txt_events: Vec<&str> = txt
        .batches
        .iter()
        .flat_map(|b| b.events.iter().map(|e| e.name.as_str()))
        .collect();
    // The device's header row comes first, its batch columns empty.
    assert!(
        rows[1].starts_with("0,,,,,,,,,trace,\"utrace="),
        "{}",
        rows[1]
    );
    let (last, events) = rows[2..].split_last().unwrap();
    let csv_events: Vec<&str> = events
        .iter()
        .map(|r| r.split(',').nth(9).unwrap())
        .collect();
    assert_eq!(csv_events, txt_events, "the same events in the same order");
    // Every row says when its batch was submitted, on the events' clock: before the event.
    for r in events {
        let f: Vec<&str> = r.split(',').collect();
        let (submitted, ns) = (f[5].parse::<u64>(), f[6].parse::<u64>().unwrap());
        assert!(submitted.is_ok_and(|s| s <= ns), "{r}");
    }
    assert!(
        rows[2].contains(",start_cmd_buffer,\"cmd=0x"),
        "{}",
        rows[2]
    );
    // The device's end row closes the output, its counts those of txt's END OF TRACE.
    let end = &txt.ends[0];
    assert_eq!(
        *last,
        format!(
            "0,,,,,,,,,end_of_trace,\"batches={}, events={}, dropped={}\"",
            end.batches, end.events, end.dropped
        )
    );
}

#[test]
fn two_devices_sharing_a_csv_file_write_one_header_and_an_end_row_each() {
    let dir = TempDir::new("csv-two-devices");
    let file = dir.path().join("trace.csv");
    let run = workload!("two-devices")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("GPU_TRACE_FORMAT", "csv")
        .run(&dir);
    assert_clean(&run);
    let text = std::fs::read_to_string(&file).unwrap();
    let headers = text.lines().filter(|l| l.starts_with("device,")).count();
    assert_eq!(headers, 1, "{text}");
    assert!(text.starts_with("device,batch,"));
    let ends: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(",end_of_trace,"))
        .collect();
    assert_eq!(ends.len(), 2, "{text}");
    for device in 0..2 {
        assert!(
            ends.iter().any(|l| l.starts_with(&format!(
                "{device},,,,,,,,,end_of_trace,\"batches=4, events=24, dropped=0\""
            ))),
            "{ends:?}"
        );
    }
}

#[test]
fn unknown_formats_are_reported_and_fall_back_to_txt() {
    let dir = TempDir::new("bad-format");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_FORMAT", "xml")
        .run(&dir);
    assert!(run.success);
    let said: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("GPU_TRACE_FORMAT"))
        .collect();
    assert_eq!(said.len(), 1, "{}", run.stderr);
    assert!(
        said[0].contains("xml") && said[0].contains("txt is written instead"),
        "{}",
        run.stderr
    );
    assert_eq!(parse(&run.stdout).batches.len(), 4);
}
