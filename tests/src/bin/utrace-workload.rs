//! A Vulkan program for utrace's tests and demo: runs one scenario on the first Vulkan device
//! and writes a JSON report (its submissions' CPU windows, command buffers, results).
//! Stdout is left to the layer's trace: this program writes to stderr only, except with
//! `--chatter`, which prints a line after each submission through C's `stdout` stream.
//!
//! ```text
//! utrace-workload --scenario NAME --report PATH
//!                 [--layers L1,L2,...] [--frames N] [--exit-without-destroy] [--chatter] [--pace-ms MS]
//!                 [--heavy-pass NAME] [--heavy-factor F] [--layer-setting KEY=VALUE]...
//!                 [--exit-when PATH] [--frames-until PATH] [--ready-file PATH]
//!                 [--features2] [--statistics]
//! ```
//!
//! NAME: basic, two-devices, two-instances, instance-after-instance, frames, demo; the GPU-work scenarios
//! render-pass, dynamic-rendering, secondaries, compute, transfers, labels, and all-gpu-work
//! (all six on one device); the submission patterns (`utrace_tests::patterns::SCENARIOS`);
//! validation-error (one deliberate validation error: the tests' positive control);
//! passes (frames of labelled passes, `--heavy-pass` one of them made `--heavy-factor` (a number, 1.05 a small step) times
//! heavier: what `utrace diff` compares; 20 frames unless `--frames` says).
//! `--ready-file PATH`: made once the first frame of `demo` or `frames` completed.
//! `--frames-until PATH`: the `frames` scenario stops at the first frame after PATH
//! exists. `--exit-when PATH`: once the work is done and the devices and instances are destroyed,
//! wait until PATH exists before exiting (a test's way to order what it sees before the
//! process goes).
//! Without arguments (or with a bad one) the usage names them all.

use std::process::ExitCode;

use utrace_tests::workload::{self, Options};

/// The most `--exit-when` waits: a test that never creates the file fails by its own limit
/// before this.
const EXIT_WHEN_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

struct Args {
    opts: Options,
    report: Option<String>,
    exit_when: Option<std::path::PathBuf>,
}

fn parse() -> Result<Args, String> {
    let mut opts = Options {
        scenario: String::new(),
        layers: Vec::new(),
        frames: 3,
        exit_without_destroy: false,
        heavy: None,
        frames_until: None,
        draws: 100_000,
    };
    let mut report = None;
    let mut exit_when = None;
    let mut frames = None;
    let mut heavy_factor = None;
    let mut layer_settings = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--scenario" => opts.scenario = value()?,
            "--report" => report = Some(value()?),
            "--layers" => {
                opts.layers = value()?
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            }
            "--frames" => {
                let v = value()?;
                frames = Some(
                    v.parse()
                        .map_err(|_| format!("--frames {v:?} is not a number"))?,
                )
            }
            "--heavy-pass" => {
                opts.heavy = Some(utrace_tests::frame_passes::Heavy {
                    pass: value()?,
                    factor: utrace_tests::frame_passes::DEFAULT_HEAVY_FACTOR,
                })
            }
            "--heavy-factor" => {
                let v = value()?;
                heavy_factor = Some(
                    v.parse()
                        .map_err(|_| format!("--heavy-factor {v:?} is not a number"))?,
                )
            }
            "--layer-setting" => {
                let v = value()?;
                let (key, value) = v
                    .split_once('=')
                    .ok_or_else(|| format!("--layer-setting {v:?} is not KEY=VALUE"))?;
                layer_settings.push((key.to_string(), value.to_string()));
            }
            "--exit-without-destroy" => opts.exit_without_destroy = true,
            "--exit-when" => exit_when = Some(std::path::PathBuf::from(value()?)),
            "--draws" => {
                let v = value()?;
                opts.draws = v
                    .parse()
                    .map_err(|_| format!("--draws {v:?} is not a number"))?;
            }
            "--frames-until" => opts.frames_until = Some(std::path::PathBuf::from(value()?)),
            "--ready-file" => {
                let _ = workload::READY_FILE.set(std::path::PathBuf::from(value()?));
            }
            "--chatter" => utrace_tests::chatter::enable(),
            "--features2" => utrace_tests::vk::name_features_in_chain(),
            "--statistics" => utrace_tests::vk::enable_statistics(),
            "--pace-ms" => {
                let v = value()?;
                utrace_tests::submitter::set_pace_ms(
                    v.parse()
                        .map_err(|_| format!("--pace-ms {v:?} is not a number"))?,
                )
            }
            "--help" | "-h" => {
                println!("{}", usage());
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}\n{}", usage())),
        }
    }
    if opts.scenario.is_empty() {
        return Err(format!("--scenario is required\n{}", usage()));
    }
    // An application with statistics queries of its own enables their feature itself.
    if opts.scenario == "counters-own-query" {
        utrace_tests::vk::enable_statistics();
    }
    let passes = opts.scenario == utrace_tests::frame_passes::SCENARIO;
    opts.frames = frames.unwrap_or(if passes {
        utrace_tests::frame_passes::DEFAULT_FRAMES
    } else {
        opts.frames
    });
    match (&mut opts.heavy, heavy_factor) {
        (Some(heavy), Some(factor)) => heavy.factor = factor,
        (None, Some(_)) => return Err("--heavy-factor needs --heavy-pass".into()),
        _ => {}
    }
    utrace_tests::vk::layer_settings::set(layer_settings);
    Ok(Args {
        opts,
        report,
        exit_when,
    })
}

fn usage() -> String {
    format!(
        "usage: utrace-workload --scenario NAME [--report PATH] [--layers L1,L2,...] [--frames N] [--exit-without-destroy] [--chatter] [--pace-ms MS] [--heavy-pass NAME] [--heavy-factor F] [--layer-setting KEY=VALUE] [--exit-when PATH] [--frames-until PATH] [--ready-file PATH] [--draws N] [--features2] [--statistics]\nscenarios: {}",
        workload::scenarios()
    )
}

fn main() -> ExitCode {
    // Rust's runtime ignores SIGPIPE before main; the C applications this program stands in
    // for (vkcube, vulkaninfo) have the default disposition, which kills the process when
    // something writes to a pipe nobody reads. The layer must cope with that default.
    // SAFETY: setting a signal's disposition to the default, before any other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let Args {
        opts,
        report: report_path,
        exit_when,
    } = match parse() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("utrace-workload: {e}");
            return ExitCode::from(2);
        }
    };
    let mut report = match workload::run(&opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("utrace-workload: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(path) = report_path {
        report.leaving_boot_ns = utrace_tests::vk::boottime_ns();
        let json = serde_json::to_string_pretty(&report).expect("the report serialises");
        if let Err(e) = std::fs::write(&path, json) {
            eprintln!("utrace-workload: cannot write the report {path}: {e}");
            return ExitCode::FAILURE;
        }
    }
    if let Some(path) = exit_when {
        let since = std::time::Instant::now();
        while !path.exists() && since.elapsed() < EXIT_WHEN_LIMIT {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    if report.devices.iter().all(|d| d.results_ok) {
        if opts.exit_without_destroy {
            // Straight to exit(): no destructor of the workload's Vulkan objects runs.
            std::process::exit(0);
        }
        ExitCode::SUCCESS
    } else {
        eprintln!("utrace-workload: some results were wrong");
        ExitCode::FAILURE
    }
}
