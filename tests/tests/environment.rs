//! The environment contract: disabled means off, no variable means on demand, and bad values are reported without
//! losing the trace or the application's results.

use utrace_tests::checks::{parse, said};
use utrace_tests::harness::TempDir;
use utrace_tests::workload;

const TRACEQ_THREAD: &str = "utrace-traceq";
/// The Perfetto SDK's thread, started when the data source is registered.
const PERFETTO_THREAD: &str = "TracingMuxer";

/// The files a run leaves in its directory besides a trace.
fn only_harness_files(dir: &TempDir) {
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        files
            .iter()
            .all(|f| ["layers", "xdg", "report.json"].contains(&f.as_str())),
        "no trace file: {files:?}"
    );
}

#[test]
fn disabled_passes_everything_through() {
    let dir = TempDir::new("off");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE", "1")
        .env("UTRACE_DISABLE", "1")
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert!(run.report().devices[0].results_ok);
    assert!(run.stdout.is_empty(), "no trace: {}", run.stdout);
    assert!(run.stderr.is_empty(), "nothing said: {}", run.stderr);
    assert!(
        !run.report()
            .threads
            .iter()
            .any(|t| t == TRACEQ_THREAD || t == PERFETTO_THREAD),
        "no traceq thread, no Perfetto: {:?}",
        run.report().threads
    );
    only_harness_files(&dir);

    // The control: with tracing on, the thread exists (so the check above means something).
    let on = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE", "1")
        .run(&dir);
    assert!(
        on.report().threads.iter().any(|t| t == TRACEQ_THREAD),
        "{:?}",
        on.report().threads
    );
}

#[test]
fn without_variables_the_layer_waits_for_a_perfetto_session_silently() {
    // No traced runs here: the data source is registered with the system backend, nothing
    // is traced, written or said, and nothing waits for the missing service.
    let dir = TempDir::new("on-demand");
    let started = std::time::Instant::now();
    let run = workload!("basic").layers(&["VK_LAYER_utrace"]).run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert!(run.report().devices[0].results_ok);
    assert!(run.stdout.is_empty(), "no trace: {}", run.stdout);
    assert!(run.stderr.is_empty(), "nothing said: {}", run.stderr);
    // `basic` takes a second or two (four on a slow, busy machine); a wait for the missing
    // service would be the SDK's connection timeouts, repeated.
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(
        run.report().threads.iter().any(|t| t == PERFETTO_THREAD),
        "the Perfetto producer runs: {:?}",
        run.report().threads
    );
    assert!(
        !run.report().threads.iter().any(|t| t == TRACEQ_THREAD),
        "no traceq thread before a session captures something: {:?}",
        run.report().threads
    );
    only_harness_files(&dir);

    let info = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("UTRACE_LOG", "info")
        .run(&dir);
    assert!(
        info.stderr
            .contains("registered gpu.renderstages.utrace with the system backend"),
        "{}",
        info.stderr
    );
    assert!(
        !info.stderr.contains("session"),
        "no session started: {}",
        info.stderr
    );
}

#[test]
fn unwritable_trace_file_falls_back_to_stdout() {
    let dir = TempDir::new("unwritable");
    let path = format!("/nonexistent-utrace-dir-{}/trace.txt", std::process::id());
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", &path)
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert!(run.report().devices[0].results_ok);
    let mentions: Vec<&str> = run.stderr.lines().filter(|l| l.contains(&path)).collect();
    assert_eq!(
        mentions.len(),
        1,
        "one message naming the path: {}",
        run.stderr
    );
    assert!(mentions[0].contains("stdout"), "{}", mentions[0]);
    let trace = parse(&run.stdout);
    assert_eq!(trace.batches.len(), 4, "the whole trace on stdout");
}

#[test]
fn gpu_trace_values() {
    let dir = TempDir::new("values");
    let run = |value: &str| {
        workload!("basic")
            .layers(&["VK_LAYER_utrace"])
            .env("GPU_TRACE", value)
            .run(&dir)
    };
    let off = run("0");
    assert!(
        off.success && off.stdout.is_empty() && off.stderr.is_empty(),
        "{off:?}"
    );

    let on = run("true");
    assert_eq!(parse(&on.stdout).batches.len(), 4);
    // Nothing said (a busy machine may add its one diagnostic of a long wait).
    let only_utrace = on.stderr.lines().all(|l| l.starts_with("utrace:"));
    assert!(said(&on).is_empty() && only_utrace, "{}", on.stderr);

    // Decision (README): an unrecognised value is reported once and counts as on.
    let odd = run("banana");
    assert!(odd.success);
    assert_eq!(parse(&odd.stdout).batches.len(), 4);
    let lines: Vec<&str> = odd
        .stderr
        .lines()
        .filter(|l| l.contains("GPU_TRACE"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", odd.stderr);
    assert!(lines[0].contains("banana"), "{}", lines[0]);
}

#[test]
fn tracefile_pid_expansion() {
    let dir = TempDir::new("pid");
    let template = dir.path().join("trace-%p.txt");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", template.to_str().unwrap())
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    let traces: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f.starts_with("trace-"))
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    let pid = traces[0]
        .trim_start_matches("trace-")
        .trim_end_matches(".txt");
    assert!(pid.parse::<u32>().is_ok(), "%p became a pid: {}", traces[0]);
    let text = std::fs::read_to_string(dir.path().join(&traces[0])).unwrap();
    assert_eq!(parse(&text).batches.len(), 4);
}

#[test]
fn the_implicit_manifest_switches_the_layer_on_with_gpu_trace_alone() {
    use utrace_tests::harness::install_implicit_manifest;
    let dir = TempDir::new("implicit");
    let data = install_implicit_manifest(dir.path());
    let data = data.to_str().unwrap();
    // No layer named by the application or VK_INSTANCE_LAYERS: GPU_TRACE=1 is enough.
    let on = workload!("basic")
        .env("XDG_DATA_HOME", data)
        .env("GPU_TRACE", "1")
        .run(&dir);
    assert!(on.success, "{}", on.stderr);
    assert_eq!(parse(&on.stdout).batches.len(), 4);
    // Without it the loader does not load the layer at all.
    let off = workload!("basic").env("XDG_DATA_HOME", data).run(&dir);
    assert!(off.success && off.stdout.is_empty(), "{off:?}");
    assert!(!off.report().threads.iter().any(|t| t == TRACEQ_THREAD));
    // UTRACE_DISABLE=1 turns the implicit layer off even with GPU_TRACE=1.
    let disabled = workload!("basic")
        .env("XDG_DATA_HOME", data)
        .env("GPU_TRACE", "1")
        .env("UTRACE_DISABLE", "1")
        .run(&dir);
    assert!(
        disabled.success && disabled.stdout.is_empty(),
        "{disabled:?}"
    );
}
