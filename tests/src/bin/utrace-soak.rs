//! The soak test as a command: many submissions of reusable command buffers with tracing
//! on, then the figures: submissions made, batches and events written, events dropped, and
//! resident memory after warm-up and at the end.
//!
//! ```text
//! utrace-soak [SUBMISSIONS] [--perfetto]      (100000 by default)
//! ```
//!
//! With `--perfetto` the trace is a Perfetto file, read back and counted (its in-process
//! buffer grows resident memory by the trace's size: it is kept until the session ends).
//!
//! Build the layer of the same profile first (`cargo build --release -p utrace-layer`).

use std::process::ExitCode;

use utrace_tests::checks::soak_result;
use utrace_tests::harness::{Run, TempDir, Workload};
use utrace_tests::perfetto_trace;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let perfetto = args.iter().any(|a| a == "--perfetto");
    let submissions: u32 = args.iter().find_map(|v| v.parse().ok()).unwrap_or(100_000);
    if perfetto {
        return perfetto_soak(submissions);
    }
    let dir = TempDir::new("soak");
    let trace = dir.path().join("trace.txt");
    let (run, secs) = soak(&dir, &trace, submissions);
    let soak = soak_result(&run, &trace);
    println!(
        "utrace-soak: {} submissions in {secs:.1} s ({:.0}/s)",
        soak.submitted,
        soak.submitted as f64 / secs
    );
    println!(
        "  trace: {} batches, {} events, {} dropped",
        soak.batches, soak.events, soak.dropped
    );
    println!(
        "  resident memory: {} KiB after warm-up, {} KiB at the end ({:+} KiB)",
        soak.rss_after_warmup_kib,
        soak.rss_at_end_kib,
        soak.rss_at_end_kib as i64 - soak.rss_after_warmup_kib as i64
    );
    if soak.batches == soak.submitted && soak.dropped == 0 && soak.events == soak.submitted * 6 {
        ExitCode::SUCCESS
    } else {
        println!("utrace-soak: events were lost");
        ExitCode::FAILURE
    }
}

/// Runs the soak scenario traced to `trace` (its name chooses the format); returns the run
/// and how long it took in seconds.
fn soak(dir: &TempDir, trace: &std::path::Path, submissions: u32) -> (Run, f64) {
    let exe = std::env::current_exe().expect("the path of this program");
    let workload = exe.with_file_name("utrace-workload");
    let started = std::time::Instant::now();
    let run = Workload::new(workload.to_str().expect("a UTF-8 path"), "soak")
        .arg("--frames", &submissions.to_string())
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", trace.to_str().expect("a UTF-8 path"))
        .run(dir);
    (run, started.elapsed().as_secs_f64())
}

/// The soak with a Perfetto file: every submission's stages in the trace, resolvable.
fn perfetto_soak(submissions: u32) -> ExitCode {
    let dir = TempDir::new("soak-perfetto");
    let trace = dir.path().join("soak.pftrace");
    let (run, secs) = soak(&dir, &trace, submissions);
    if !run.success {
        println!("utrace-soak: the workload failed: {}", run.stderr);
        return ExitCode::FAILURE;
    }
    let bytes = std::fs::metadata(&trace).map(|m| m.len()).unwrap_or(0);
    let resolved = perfetto_trace::read(&trace);
    let rss = &run.report().devices[0].rss_kib;
    println!(
        "utrace-soak: {submissions} submissions in {secs:.1} s ({:.0}/s), Perfetto",
        f64::from(submissions) / secs
    );
    println!(
        "  trace: {bytes} bytes, {} vkQueueSubmit slices, {} render stages, {} clears, {} clock snapshots",
        resolved.submits.len(),
        resolved.stages.len(),
        resolved.clears,
        resolved.snapshots.len()
    );
    println!(
        "  resident memory: {} KiB after warm-up, {} KiB at the end",
        rss.first().copied().unwrap_or(0),
        rss.last().copied().unwrap_or(0)
    );
    if resolved.submits.len() == submissions as usize
        && resolved.stages.len() == submissions as usize * 3
    {
        ExitCode::SUCCESS
    } else {
        println!("utrace-soak: stages were lost");
        ExitCode::FAILURE
    }
}
