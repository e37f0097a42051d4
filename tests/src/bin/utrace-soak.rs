//! The soak test as a command: many submissions of reusable command buffers with tracing
//! on, then the figures: submissions made, batches and events written, events dropped, and
//! resident memory after warm-up and at the end.
//!
//! ```text
//! utrace-soak [SUBMISSIONS]      (100000 by default)
//! ```
//!
//! Build the layer of the same profile first (`cargo build --release -p utrace-layer`).

use std::process::ExitCode;

use utrace_tests::checks::soak_result;
use utrace_tests::harness::{TempDir, Workload};

fn main() -> ExitCode {
    let submissions: u32 = std::env::args()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let exe = std::env::current_exe().expect("the path of this program");
    let workload = exe.with_file_name("utrace-workload");
    let dir = TempDir::new("soak");
    let trace = dir.path().join("trace.txt");
    let started = std::time::Instant::now();
    let run = Workload::new(workload.to_str().expect("a UTF-8 path"), "soak")
        .arg("--frames", &submissions.to_string())
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", trace.to_str().expect("a UTF-8 path"))
        .run(&dir);
    let soak = soak_result(&run, &trace);
    let secs = started.elapsed().as_secs_f64();
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
