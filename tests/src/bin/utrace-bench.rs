//! What the layer costs the application, measured in one process per mode as an A/B:
//! three devices on Lavapipe, two without the layer (A and A', the noise floor) and one with
//! it (B), the same recording or submission alternated between them over many rounds. Also
//! how fast the traceq thread writes each format. Prints a table and one JSON line.
//!
//! ```text
//! utrace-bench [--rounds N] [--modes disabled,idle,...] [--no-throughput]
//! ```

use std::process::Command;

use serde_json::{json, Value};
use utrace_tests::bench::{ab, rows, throughput, FORMATS, MODES, ROWS};
use utrace_tests::harness::{write_manifest, TempDir, LAVAPIPE_ICD};

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1).map(String::as_str)
}

fn child(args: &[String]) -> Result<(), String> {
    if let Some(draws) = arg(args, "--child-throughput") {
        let draws = draws.parse().map_err(|_| "bad draw count")?;
        let batches = arg(args, "--batches")
            .and_then(|b| b.parse().ok())
            .unwrap_or(1);
        return throughput::run(draws, batches, args.iter().any(|a| a == "--hand-timed"));
    }
    let rounds = arg(args, "--rounds")
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    let only: Option<Vec<&str>> = arg(args, "--rows").map(|r| r.split(',').collect());
    let result = ab::run_mode(rounds, only.as_deref())?;
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
        .env_remove("VK_INSTANCE_LAYERS");
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
    let rounds = arg(&args, "--rounds").unwrap_or("15").to_string();
    let wanted: Option<Vec<&str>> = arg(&args, "--modes").map(|m| m.split(',').collect());
    let dir = TempDir::new("bench");
    let layers = write_manifest(dir.path());
    println!(
        "utrace-bench: Lavapipe, {} commands per recording, {} submissions per round, {rounds} rounds; B/A medians (min..max)",
        rows::COMMANDS,
        rows::SUBMITS
    );
    let mut results = serde_json::Map::new();
    for mode in MODES
        .iter()
        .filter(|m| wanted.as_ref().is_none_or(|w| w.contains(&m.name)))
    {
        eprintln!("utrace-bench: measuring {} ...", mode.label);
        let out = command(dir.path(), &layers, mode.vars)
            .args(["--child", mode.name, "--rounds", &rounds])
            .output()
            .expect("the benchmark child runs");
        let text = String::from_utf8_lossy(&out.stdout);
        match serde_json::from_str::<Value>(text.trim()) {
            Ok(v) if out.status.success() => {
                results.insert(mode.name.to_string(), v);
            }
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
    print_table(&results);
    let rates = if args.iter().any(|a| a == "--no-throughput") {
        serde_json::Map::new()
    } else {
        measure_throughput(dir.path(), &layers)
    };
    println!(
        "{}",
        json!({"rounds": rounds.parse::<u32>().unwrap_or(0), "modes": results, "traceq_m_events_per_s": rates})
    );
}

fn print_table(results: &serde_json::Map<String, Value>) {
    let modes: Vec<&str> = MODES
        .iter()
        .filter(|m| results.contains_key(m.name))
        .map(|m| m.name)
        .collect();
    let label = |name: &str| {
        MODES
            .iter()
            .find(|m| m.name == name)
            .map_or("", |m| m.label)
    };
    let cell = |v: &Value| {
        format!(
            "{:.2}x ({:.2}..{:.2})",
            v["median"].as_f64().unwrap_or(f64::NAN),
            v["min"].as_f64().unwrap_or(f64::NAN),
            v["max"].as_f64().unwrap_or(f64::NAN)
        )
    };
    for (title, key) in [
        ("B/A: the layer's cost", "ratio"),
        ("A'/A: the noise floor", "floor"),
    ] {
        println!("\n{title}");
        print!("{:<26} {:>8}", "", "A ns");
        for m in &modes {
            print!(" {:>24}", label(m));
        }
        println!();
        for (row, row_label) in ROWS {
            let a_ns = results[modes[0]][row]["a_ns"].as_f64().unwrap_or(f64::NAN);
            print!("{row_label:<26} {a_ns:>8.1}");
            for m in &modes {
                print!(" {:>24}", cell(&results[*m][row][key]));
            }
            println!();
        }
    }
    println!("\n8 threads / 1 thread, CPU per dispatch with the layer (contention shows above 1)");
    for m in &modes {
        let one = results[*m]["threads_1"]["b_ns"]
            .as_f64()
            .unwrap_or(f64::NAN);
        let eight = results[*m]["threads_8"]["b_ns"]
            .as_f64()
            .unwrap_or(f64::NAN);
        println!(
            "{:<26} {:.2}x ({one:.1} ns -> {eight:.1} ns)",
            label(m),
            eight / one
        );
    }
}

fn measure_throughput(
    dir: &std::path::Path,
    layers: &std::path::Path,
) -> serde_json::Map<String, Value> {
    println!("\ntraceq throughput, M events/s of its working time / of its CPU time (the layer's UTRACE_LOG=info line)");
    print!("{:<10}", "format");
    for (draws, batches) in throughput::SIZES {
        print!(" {:>20}", format!("{draws} draws x{batches}"));
    }
    println!();
    let run = |vars: &[(&str, &str)], draws: u32, batches: u32, extra: &[&str]| {
        let out = command(dir, layers, vars)
            .args([
                "--child-throughput",
                &draws.to_string(),
                "--batches",
                &batches.to_string(),
            ])
            .args(extra)
            .output()
            .expect("the benchmark child runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let mut all = serde_json::Map::new();
    // Peak resident size of each format's child at the memory comparison's size.
    let mut peaks = Vec::new();
    for (format, vars) in FORMATS {
        print!("{format:<10}");
        let mut per_size = serde_json::Map::new();
        for (draws, batches) in throughput::SIZES {
            let mut vars = vars.to_vec();
            vars.push(("UTRACE_LOG", "info"));
            let (ok, stderr) = run(&vars, draws, batches, &[]);
            match throughput::parse(&stderr) {
                Some(r) if ok => {
                    print!(" {:>20}", format!("{:.2} / {:.2}", r.wall, r.cpu));
                    per_size.insert(draws.to_string(), json!({"wall": r.wall, "cpu": r.cpu}));
                    let peak = throughput::parse_peak_rss(&stderr);
                    if let Some(kb) = peak.filter(|_| draws == throughput::MEMORY_DRAWS) {
                        peaks.push((format, kb));
                    }
                }
                _ => {
                    print!(" {:>20}", "failed");
                    eprintln!("{format} {draws}: {stderr}");
                }
            }
        }
        println!();
        all.insert(format.to_string(), Value::Object(per_size));
    }
    let draws = throughput::MEMORY_DRAWS;
    let (ok, stderr) = run(&[], draws, 1, &["--hand-timed"]);
    match throughput::parse_peak_rss(&stderr).filter(|_| ok) {
        Some(own) => {
            let mb = |kb: u64| kb as f64 / 1024.0;
            print!("\npeak memory at {draws} draws: {:.0} MB timed by the program itself; the layer adds", mb(own));
            let mut extra = serde_json::Map::new();
            for (format, kb) in peaks {
                let more = mb(kb) - mb(own);
                print!(" {more:.0} MB ({format})");
                extra.insert(format.to_string(), json!(more));
            }
            println!();
            all.insert("memory_extra_mb".into(), Value::Object(extra));
        }
        None => eprintln!("the hand-timed child failed: {stderr}"),
    }
    all
}
