//! What the layer costs the application, measured in one process per mode as an A/B:
//! three devices on Lavapipe, two without the layer (A and A', the noise floor) and one with
//! it (B), the same recording or submission alternated between them over many rounds. Also
//! how fast the traceq thread writes each format. Prints tables and one JSON line.
//!
//! ```text
//! utrace-bench [--rounds N] [--runs N] [--modes disabled,idle,...] [--rows draws,...] [--no-throughput] [--million]
//! ```
//!
//! The throughput table has a row per command buffer kind and format (see
//! `bench::throughput_table`); `--million` adds a million draws for one-time and reusable
//! command buffers.
//!
//! `--runs N` repeats the whole measurement (a child process per mode each time), prints
//! each run's tables, then the median of the runs' medians per figure.

use std::process::Command;

use serde_json::{json, Value};
use utrace_tests::bench::side::UTRACE_LAYER;
use utrace_tests::bench::stats::median_of_runs;
use utrace_tests::bench::throughput_kinds::Kind;
use utrace_tests::bench::{
    ab, overlay_manifest, rows, table, throughput, throughput_table, Mode, MODES, OVERLAY_LAYER,
    OVERLAY_LIBRARY,
};
use utrace_tests::harness::{write_manifest, TempDir, LAVAPIPE_ICD};

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1).map(String::as_str)
}

fn child(args: &[String]) -> Result<(), String> {
    if let Some(draws) = arg(args, "--child-throughput") {
        let draws = draws.parse().map_err(|_| "bad draw count")?;
        let number = |name, default| {
            arg(args, name)
                .and_then(|b| b.parse().ok())
                .unwrap_or(default)
        };
        let batches = number("--batches", 1);
        if args.iter().any(|a| a == "--hand-timed") {
            return throughput::hand_timed(draws, batches);
        }
        let kind = arg(args, "--kind").unwrap_or("resubmit");
        let kind = Kind::named(kind).ok_or_else(|| format!("no command buffer kind {kind:?}"))?;
        return throughput::run(draws, batches, kind, number("--vertices", 0));
    }
    let rounds = arg(args, "--rounds")
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    let only: Option<Vec<&str>> = arg(args, "--rows").map(|r| r.split(',').collect());
    let layer = arg(args, "--child")
        .and_then(Mode::named)
        .map_or(UTRACE_LAYER, |m| m.layer);
    let result = ab::run_mode(rounds, only.as_deref(), layer)?;
    println!("{result}");
    Ok(())
}

/// A child of this program with the layer's manifest found and `vars` set.
fn command(dir: &std::path::Path, layers: &std::path::Path, vars: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("the benchmark's own path"));
    cmd.env("VK_DRIVER_FILES", LAVAPIPE_ICD)
        .env("VK_ADD_LAYER_PATH", layers)
        .env("XDG_RUNTIME_DIR", dir)
        .env_remove("GPU_TRACE")
        .env_remove("GPU_TRACEFILE")
        .env_remove("GPU_TRACEPOINTS")
        .env_remove("GPU_TRACE_FORMAT")
        .env_remove("UTRACE_LOG")
        .env_remove("VK_INSTANCE_LAYERS")
        .env_remove("VK_LAYER_MESA_OVERLAY_CONFIG");
    for (k, v) in vars {
        cmd.env(k, v.replace("{dir}", &dir.to_string_lossy()));
    }
    cmd
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args
        .iter()
        .any(|a| a == "--child" || a == "--child-throughput")
    {
        if let Err(e) = child(&args) {
            eprintln!("utrace-bench: {e}");
            std::process::exit(1);
        }
        return;
    }
    if args.iter().any(|a| a == "--convert") {
        // The command beside this benchmark (both built by `cargo build --release`).
        let exe = std::env::current_exe().expect("the benchmark's own path");
        let utrace = exe.with_file_name("utrace");
        let dir = TempDir::new("bench-convert");
        if let Err(e) = utrace_tests::bench::convert::measure(&utrace, dir.path()) {
            eprintln!("utrace-bench: {e}");
            std::process::exit(1);
        }
        return;
    }
    let rounds = arg(&args, "--rounds").unwrap_or("15").to_string();
    let runs: usize = match arg(&args, "--runs").map(str::parse) {
        None => 1,
        Some(Ok(n)) if n >= 1 => n,
        Some(_) => {
            eprintln!("utrace-bench: --runs wants a number of runs, 1 or more");
            std::process::exit(2);
        }
    };
    let wanted: Option<Vec<&str>> = arg(&args, "--modes").map(|m| m.split(',').collect());
    let dir = TempDir::new("bench");
    let layers = write_manifest(dir.path());
    let overlay = std::path::Path::new(OVERLAY_LIBRARY).exists();
    if overlay {
        std::fs::write(layers.join("VkLayer_MESA_overlay.json"), overlay_manifest())
            .expect("the overlay's manifest");
    }
    println!(
        "utrace-bench: Lavapipe, {} commands per recording, {} submissions per round, {rounds} rounds, {runs} run(s); per round A, A' without a layer and B with one",
        rows::COMMANDS,
        rows::SUBMITS
    );
    let mut each_run = Vec::new();
    for run in 1..=runs {
        if runs > 1 {
            println!("\n=== run {run} of {runs} ===");
        }
        let mut results = serde_json::Map::new();
        for mode in MODES
            .iter()
            .filter(|m| wanted.as_ref().is_none_or(|w| w.contains(&m.name)))
        {
            if mode.layer == OVERLAY_LAYER && !overlay {
                eprintln!("utrace-bench: {OVERLAY_LIBRARY} is not installed: no overlay row");
                continue;
            }
            eprintln!("utrace-bench: measuring {} ...", mode.label);
            results.insert(
                mode.name.to_string(),
                measure_mode(dir.path(), &layers, mode, &args),
            );
        }
        print!("{}", table::tables(&results));
        let rates = if args.iter().any(|a| a == "--no-throughput") {
            serde_json::Map::new()
        } else {
            let child = |vars: &[(&str, &str)]| command(dir.path(), &layers, vars);
            throughput_table::measure(&child, args.iter().any(|a| a == "--million"))
        };
        each_run.push(json!({"modes": results, "traceq_m_events_per_s": rates}));
    }
    let summary = if runs > 1 {
        let median = median_of_runs(&each_run);
        println!(
            "\n=== the median of the {runs} runs' medians (ranges: the least and greatest of the runs' medians) ==="
        );
        if let Some(modes) = median["modes"].as_object() {
            print!("{}", table::tables(modes));
        }
        if let Some(rates) = median["traceq_m_events_per_s"].as_object() {
            if !rates.is_empty() {
                println!("\ntraceq throughput, M events/s, median of the runs");
                for (row, sizes) in rates {
                    println!("{row:<32} {sizes}");
                }
            }
        }
        median
    } else {
        each_run[0].clone()
    };
    println!(
        "{}",
        json!({
            "rounds": rounds.parse::<u32>().unwrap_or(0),
            "runs": runs,
            "modes": summary["modes"],
            "traceq_m_events_per_s": summary["traceq_m_events_per_s"],
            "each_run": if runs > 1 { Value::from(each_run) } else { Value::Null },
        })
    );
}

/// glibc's heap trimming off in the A/B children (and large blocks from the heap, not
/// `mmap`): otherwise the side whose recordings lie at the top of the heap gives their
/// memory back to the system at each reset and faults it in again at its next recording,
/// which made that side's hand-timed draws 2.5x slower in every round (A'/A 2.5-6x), and
/// which side it is depends on the process. The throughput children keep glibc's defaults
/// (their memory is measured).
const NO_HEAP_TRIM: &str =
    "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432";

/// One mode's rows, measured in a child process of its own; exits when the child fails.
fn measure_mode(
    dir: &std::path::Path,
    layers: &std::path::Path,
    mode: &Mode,
    args: &[String],
) -> Value {
    let rounds = arg(args, "--rounds").unwrap_or("15");
    let mut cmd = command(dir, layers, mode.vars);
    cmd.env("GLIBC_TUNABLES", NO_HEAP_TRIM)
        .args(["--child", mode.name, "--rounds", rounds]);
    if let Some(rows) = arg(args, "--rows") {
        cmd.args(["--rows", rows]);
    }
    let out = cmd.output().expect("the benchmark child runs");
    let text = String::from_utf8_lossy(&out.stdout);
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(v) if out.status.success() => v,
        _ => {
            eprintln!(
                "{}: failed:\n{}",
                mode.label,
                String::from_utf8_lossy(&out.stderr)
            );
            std::process::exit(1);
        }
    }
}
