//! Hardware counters collected by the layer (`GPU_TRACE_COUNTERS=perf:NAME,...`), on the
//! fault layer's emulation of VK_KHR_performance_query beneath utrace (`UTRACE_PERF_QUERY=1`:
//! its values come from the work recorded inside each query, and it says any breach of the
//! extension's rules as `utrace-perf: VUID-...`), validation beneath both.

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::counter_checks::named;
use utrace_tests::harness::{Run, TempDir};
use utrace_tests::trace_txt::{Event, Trace};
use utrace_tests::workload;

/// `scenario` traced with hardware counters `counters` (and `envs`), the emulation on.
fn traced(scenario: &str, counters: &str, envs: &[(&str, &str)]) -> (Run, Trace) {
    let dir = TempDir::new("counters-hardware");
    let mut w = workload!(scenario)
        .layers(&[
            "VK_LAYER_utrace",
            "VK_LAYER_UTRACE_fault",
            "VK_LAYER_KHRONOS_validation",
        ])
        .env("UTRACE_PERF_QUERY", "1")
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_COUNTERS", counters);
    for (k, v) in envs {
        w = w.env(k, v);
    }
    let run = w.run(&dir);
    assert_clean(&run);
    assert!(!run.stderr.contains("utrace-perf: VUID"), "{}", run.stderr);
    // The txt format's trace on stdout, checked against the submissions (another format,
    // or a file: empty).
    let txt = !envs
        .iter()
        .any(|(k, _)| *k == "GPU_TRACE_FORMAT" || *k == "GPU_TRACEFILE");
    // Without some tracepoints the trace is not the submissions' whole: parsed only.
    let whole = !envs.iter().any(|(k, _)| *k == "GPU_TRACEPOINTS");
    let trace = match (txt, whole) {
        (true, true) => assert_trace_matches(&run.stdout, &run),
        (true, false) => utrace_tests::trace_txt::parse_trace(&run.stdout).unwrap(),
        (false, _) => Trace::default(),
    };
    (run, trace)
}

fn arg<'e>(e: &'e Event, name: &str) -> Option<&'e str> {
    e.arg(name)
}

/// Counters of render-pass and command scope only (`Draws`, `Vertices`): each render pass
/// gets a query, begun before it and ended after it; the values are the work recorded in
/// it (the `counters` scenario: a pass of one draw of 6 vertices x 4 instances, a pass of
/// two subpasses of a triangle each). Nothing else carries them.
#[test]
fn render_passes_get_the_counters_of_their_own_work() {
    let (run, trace) = traced("counters", "perf:Draws,vertices", &[]);
    assert!(
        run.stderr.contains("Draws, Vertices in one pass, the profiling lock taken; counted around each render pass instance"),
        "{}",
        run.stderr
    );
    let events = &trace.batches[0].events;
    let passes = named(events, "end_render_pass");
    assert_eq!(passes.len(), 2, "{}", run.stdout);
    let values: Vec<(Option<&str>, Option<&str>)> = passes
        .iter()
        .map(|e| (arg(e, "perf_draws"), arg(e, "perf_vertices")))
        .collect();
    assert_eq!(
        values,
        [(Some("1"), Some("24")), (Some("2"), Some("6"))],
        "{}",
        run.stdout
    );
    let others = events
        .iter()
        .filter(|e| e.name != "end_render_pass")
        .filter(|e| e.args.iter().any(|(k, _)| k.starts_with("perf_")));
    assert_eq!(others.count(), 0, "{}", run.stdout);
}

/// A counter of command-buffer scope (`Workgroups`; `GPU busy`, a float) makes the query
/// span the whole command buffer: begun as its first command and ended as its last (the
/// emulation checks both), the values on its `end_cmd_buffer` (the `counters` scenario's
/// dispatch of 5 x 3 x 1 groups).
#[test]
fn a_counter_of_command_buffer_scope_spans_the_command_buffer() {
    let (run, trace) = traced("counters", "perf:Workgroups,GPU busy,Draws", &[]);
    assert!(
        run.stderr
            .contains("counted around each command buffer (a counter is of command-buffer scope)"),
        "{}",
        run.stderr
    );
    let events = &trace.batches[0].events;
    let end = named(events, "end_cmd_buffer");
    assert_eq!(arg(end[0], "perf_workgroups"), Some("15"), "{}", run.stdout);
    assert_eq!(arg(end[0], "perf_gpu_busy"), Some("100"), "{}", run.stdout);
    assert_eq!(arg(end[0], "perf_draws"), Some("3"), "{}", run.stdout);
    for e in named(events, "end_render_pass") {
        assert_eq!(arg(e, "perf_draws"), None, "{e:?}");
    }
}

/// Secondaries executed inside a counted range count in it (the `secondaries` scenario: a
/// render pass of two secondaries drawing a triangle each, then a secondary dispatching 64
/// groups outside it): per render pass, and across the whole command buffer.
#[test]
fn work_in_executed_secondaries_counts_in_the_range_around_them() {
    let (run, trace) = traced("secondaries", "perf:Draws,Vertices", &[]);
    let events = &trace.batches[0].events;
    let pass = named(events, "end_render_pass");
    assert_eq!(arg(pass[0], "perf_draws"), Some("2"), "{}", run.stdout);
    assert_eq!(arg(pass[0], "perf_vertices"), Some("6"), "{}", run.stdout);
    let (run, trace) = traced("secondaries", "perf:Workgroups,Draws", &[]);
    let end = named(&trace.batches[0].events, "end_cmd_buffer");
    let primary = end.last().expect("the primary's end");
    assert_eq!(
        arg(primary, "perf_workgroups"),
        Some("64"),
        "{}",
        run.stdout
    );
    assert_eq!(arg(primary, "perf_draws"), Some("2"), "{}", run.stdout);
}

/// Dynamic rendering instances are counted like render passes (the `dynamic-rendering`
/// scenario's first instance: two draws of 6 and 3 vertices).
#[test]
fn dynamic_rendering_is_counted_like_render_passes() {
    let (run, trace) = traced("dynamic-rendering", "perf:Draws,Vertices", &[]);
    let first = named(&trace.batches[0].events, "end_rendering");
    assert_eq!(arg(first[0], "perf_draws"), Some("2"), "{}", run.stdout);
    assert_eq!(arg(first[0], "perf_vertices"), Some("9"), "{}", run.stdout);
}

/// A reusable command buffer is counted run by run, its queries read and reset on the host
/// between runs (the emulation says a query run again unreset as a breach, which `traced`
/// refuses): the `counters-reruns` scenario runs a pass of 2 draws three times, each right
/// after the last completed, then re-recorded with 3 draws three times more; its
/// simultaneous-use command buffer gets none, said once; past its pool's 32 queries a
/// command buffer's render passes say partial. Per command buffer too: the
/// `counters` scenario's reusable indirect dispatch (which the emulation counts as no
/// workgroups) gets its counters on each of its three runs.
#[test]
fn reusable_command_buffers_are_counted_run_by_run() {
    let (run, trace) = traced("counters-reruns", "perf:Draws,Vertices", &[]);
    let passes: Vec<(Option<&str>, Option<&str>)> = trace.batches[..7]
        .iter()
        .flat_map(|b| named(&b.events, "end_render_pass"))
        .map(|e| (arg(e, "perf_draws"), arg(e, "perf_vertices")))
        .collect();
    let (two, three) = ((Some("2"), Some("6")), (Some("3"), Some("9")));
    assert_eq!(
        passes,
        [two, two, two, three, three, three, (None, None)],
        "{}",
        run.stdout
    );
    let said = "a command buffer recorded for SIMULTANEOUS_USE gets no hardware counters";
    assert_eq!(run.stderr.matches(said).count(), 1, "{}", run.stderr);
    // 34 render passes in one command buffer: the pool's 32 queries count the first 32,
    // the last two say they were not measured; said once.
    let many = named(&trace.batches[7].events, "end_render_pass");
    assert_eq!(many.len(), 34);
    assert!(many[..32].iter().all(|e| arg(e, "perf_draws") == Some("1")));
    assert!(many[32..]
        .iter()
        .all(|e| arg(e, "perf_draws").is_none() && arg(e, "partial") == Some("1")));
    let said = "more render pass instances than its hardware counter pool has queries";
    assert_eq!(run.stderr.matches(said).count(), 1, "{}", run.stderr);
    let (run, trace) = traced("counters", "perf:Workgroups,GPU busy", &[]);
    let ends: Vec<Option<&str>> = trace
        .batches
        .iter()
        .flat_map(|b| named(&b.events, "end_cmd_buffer"))
        .map(|e| arg(e, "perf_gpu_busy"))
        .collect();
    assert_eq!(ends, [Some("100"); 4], "{}", run.stdout);
}

/// The other formats: json's arguments hold the values as numbers (a float counter's too),
/// csv's header gets a column per counter, named by its key.
#[test]
fn json_and_csv_carry_the_counters() {
    let (run, _) = traced(
        "counters",
        "perf:Workgroups,GPU busy",
        &[("GPU_TRACE_FORMAT", "json")],
    );
    let end = run
        .stdout
        .lines()
        .find(|l| l.contains("\"usage\":\"one_time_submit\""))
        .expect("the one-time command buffer's batch");
    assert!(
        end.contains("\"name\":\"end_cmd_buffer\",\"args\":{\"cmd\":")
            && end.contains(",\"perf_workgroups\":15,\"perf_gpu_busy\":100}"),
        "{end}"
    );
    let dir = TempDir::new("counters-hardware-csv");
    let run = workload!("counters")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_UTRACE_fault"])
        .env("UTRACE_PERF_QUERY", "1")
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_FORMAT", "csv")
        .env("GPU_TRACE_COUNTERS", "perf:workgroups,gpu BUSY")
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    let mut lines = run.stdout.lines();
    assert_eq!(
        lines.next(),
        Some("device,batch,frame,submission,thread,submitted,ns,delta,depth,event,args,perf_workgroups,perf_gpu_busy,partial")
    );
    let end = lines
        .find(|l| l.contains(",end_cmd_buffer,"))
        .expect("an end_cmd_buffer row");
    assert!(end.ends_with(",15,100,"), "{end}");
    let last = run.stdout.lines().last().unwrap();
    assert!(
        last.contains(",end_of_trace,") && last.ends_with(",,,"),
        "{last}"
    );
}

/// Perfetto: a descriptor names the counters by their keys (ids from 101) with their units,
/// and each counted
/// range sets them at its begin and back to 0 at its end, a float as a double; `utrace
/// report` reads them back.
#[test]
fn perfetto_draws_hardware_counter_tracks() {
    let dir = TempDir::new("counters-hardware-perfetto");
    let file = dir.path().join("trace.pftrace");
    let run = workload!("counters")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_UTRACE_fault"])
        .env("UTRACE_PERF_QUERY", "1")
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("GPU_TRACE_COUNTERS", "perf:Workgroups,GPU busy")
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    let trace = utrace_tests::perfetto_trace::decode(&std::fs::read(&file).unwrap()).unwrap();
    let names = utrace_tests::perfetto_trace::counter_names(&trace);
    assert_eq!(
        names,
        [
            (101, "perf_workgroups".into()),
            (102, "perf_gpu_busy".into())
        ]
    );
    // Units where Perfetto has one: GPU busy is a percentage (PERCENT, 37), Workgroups a
    // generic count (none).
    let units: Vec<(u32, Option<i32>)> = trace
        .packet
        .iter()
        .filter_map(|p| p.gpu_counter_event.as_ref()?.counter_descriptor.as_ref())
        .flat_map(|d| {
            d.specs
                .iter()
                .map(|s| (s.counter_id.unwrap(), s.numerator_units))
        })
        .collect();
    assert_eq!(units, [(101, None), (102, Some(37))]);
    let samples = |id| utrace_tests::perfetto_trace::counter_samples(&trace, id);
    let ints: Vec<i64> = samples(101)
        .iter()
        .map(|s| s.1.int_value.unwrap_or(-1))
        .collect();
    // The one-time command buffer's 15 workgroups, then the reusable one's three runs.
    assert_eq!(ints, [15, 0, 0, 0, 0, 0, 0, 0]);
    let doubles: Vec<f64> = samples(102)
        .iter()
        .map(|s| s.1.double_value.unwrap_or(-1.0))
        .collect();
    assert_eq!(doubles, [100.0, 0.0].repeat(4));
    // utrace report reads them back from the stages' arguments: the four command buffers'
    // 15 workgroups, and GPU busy 100 each.
    let out = std::process::Command::new(utrace_tests::harness::utrace_exe())
        .args(["report", "--counters", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = report["hardware_counters"].as_array().expect("the rows");
    let cb = rows
        .iter()
        .find(|r| r["key"] == "cmd_buffer")
        .expect("cmd_buffer");
    assert_eq!(cb["ranges"], 4, "{report}");
    assert_eq!(cb["perf_workgroups"]["sum"], 15.0, "{report}");
    assert_eq!(cb["perf_gpu_busy"]["mean"], 100.0, "{report}");
}

/// `utrace report --counters` of a trace with hardware counters, against the tests' own
/// sums from the trace: the `counters-reruns` scenario's counted passes (2, 2, 2, 3, 3 and
/// 3 draws of 3 vertices, then 32 of 1 draw; the 2 past the pool are not counted) make one
/// `render_pass` group of 38 ranges, 47 draws and 141 vertices; the table says so too;
/// `utrace diff` compares them.
#[test]
fn report_gives_each_groups_hardware_counters_as_the_trace_says() {
    let dir = TempDir::new("counters-hardware-report");
    let file = dir.path().join("trace.txt");
    let (run, _) = traced(
        "counters-reruns",
        "perf:Draws,Vertices",
        &[("GPU_TRACEFILE", file.to_str().unwrap())],
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let trace = utrace_tests::trace_txt::parse_trace(&text).unwrap();
    let mut want: std::collections::BTreeMap<String, (u64, f64, f64)> = Default::default();
    for e in trace.batches.iter().flat_map(|b| &b.events) {
        if let (Some(d), Some(v)) = (arg(e, "perf_draws"), arg(e, "perf_vertices")) {
            let kind = e.name.trim_start_matches("end_").to_string();
            let g = want.entry(kind).or_default();
            g.0 += 1;
            g.1 += d.parse::<f64>().unwrap();
            g.2 += v.parse::<f64>().unwrap();
        }
    }
    assert_eq!(want["render_pass"], (38, 47.0, 141.0), "{}", run.stderr);
    let report = |extra: &[&str]| {
        let out = std::process::Command::new(utrace_tests::harness::utrace_exe())
            .args(["report", "--counters"])
            .args(extra)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&report(&["--json"])).unwrap();
    let rows = json["hardware_counters"].as_array().expect("the rows");
    assert_eq!(rows.len(), want.len(), "{rows:?}");
    for row in rows {
        let key = row["key"].as_str().unwrap();
        let (ranges, draws, vertices) = want[key];
        assert_eq!(row["ranges"], ranges, "{key}");
        assert_eq!(row["perf_draws"]["sum"], draws, "{key}");
        assert_eq!(row["perf_vertices"]["sum"], vertices, "{key}");
        assert_eq!(row["perf_draws"]["mean"], draws / ranges as f64, "{key}");
    }
    let table = report(&[]);
    assert!(table.contains("hardware counters (sum and mean"), "{table}");
    assert!(!table.contains("no pipeline statistics"), "{table}");
    let (_, hardware) = table.split_once("hardware counters (").unwrap();
    let pass: Vec<&str> = hardware
        .lines()
        .find(|l| l.starts_with("render_pass "))
        .expect("the render_pass row")
        .split_whitespace()
        .collect();
    assert_eq!(
        pass,
        ["render_pass", "38", "47", "1.2", "141", "3.7"],
        "{table}"
    );
    // utrace diff compares them: a trace against itself, unchanged.
    let out = std::process::Command::new(utrace_tests::harness::utrace_exe())
        .args(["diff", "--json"])
        .args([&file, &file])
        .output()
        .unwrap();
    let diff: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(diff["counters"]["kind"], "hardware counters", "{diff}");
    assert_eq!(diff["counters"]["groups"], 1, "{diff}");
    assert_eq!(diff["counters"]["changed"], serde_json::json!([]), "{diff}");
}

/// Without command buffer tracepoints (`GPU_TRACEPOINTS=-cmd_buffer`), a set of
/// command-buffer scope has no range to go on: no event carries it (it once went on the
/// last render pass, as if that pass had counted the whole command buffer).
#[test]
fn a_command_buffer_scope_set_goes_nowhere_without_its_tracepoint() {
    let (run, trace) = traced(
        "counters",
        "perf:Workgroups,Draws",
        &[("GPU_TRACEPOINTS", "-cmd_buffer")],
    );
    for e in trace.batches.iter().flat_map(|b| &b.events) {
        assert_eq!(arg(e, "perf_workgroups"), None, "{e:?}\n{}", run.stdout);
    }
}
