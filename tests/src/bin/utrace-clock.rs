//! How well the measured GPU clock (no calibrated timestamps) places events on this
//! machine: the demo run `--runs N` times with `UTRACE_FORCE_MEASURED_CLOCK=1` on Lavapipe,
//! each run's largest mapping error and the bound the layer wrote, then their medians. A
//! command, not a test: no round is tight while every core is busy, so the figures say
//! what the machine allows (run it on a quiet one).
//!
//! ```text
//! utrace-clock [--runs N]
//! ```

use std::process::ExitCode;

use utrace_tests::clock_truth::measured_run;

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs = match args.as_slice() {
        [] => 9,
        [flag, n] if flag == "--runs" => match n.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("utrace-clock: --runs {n:?} is not a positive number");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("usage: utrace-clock [--runs N]");
            return ExitCode::from(2);
        }
    };
    // The workload is built beside this program.
    let workload = std::env::current_exe()
        .ok()
        .and_then(|me| Some(me.parent()?.join("utrace-workload")))
        .filter(|w| w.exists());
    let Some(workload) = workload else {
        eprintln!(
            "utrace-clock: no utrace-workload beside this program (cargo build -p utrace-tests)"
        );
        return ExitCode::from(2);
    };
    let workload = workload.to_string_lossy();
    let (mut errors, mut bounds) = (Vec::new(), Vec::new());
    for i in 1..=runs {
        let run = measured_run(&workload, None);
        println!(
            "run {i}: max mapping error {:>5} ns, written bound {:>5} ns ({}, {} ranges, reference bracket {} ns)",
            run.max_error, run.bound, run.rounds, run.ranges, run.reference_bracket
        );
        errors.push(run.max_error);
        bounds.push(run.bound);
    }
    println!(
        "median of {runs} runs: max mapping error {} ns, written bound {} ns (worst: {} ns, {} ns)",
        median(errors.clone()),
        median(bounds.clone()),
        errors.iter().max().unwrap(),
        bounds.iter().max().unwrap()
    );
    ExitCode::SUCCESS
}
