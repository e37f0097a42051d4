//! `utrace-bench --convert`: how `utrace convert --to perfetto` (and `report`, for scale)
//! grow with the nesting of a trace's ranges: one command buffer holding N labels nested
//! in each other, N = 5,000 / 20,000 / 200,000. Linear means the time per label stays
//! flat (issue 43: 5,000 took 0.18 s, 20,000 2.87 s and 200,000 did not finish in 120 s).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Nestings measured.
const DEPTHS: [usize; 3] = [5_000, 20_000, 200_000];
/// Runs per command and nesting; the median is shown.
const RUNS: usize = 3;

/// A txt trace of one command buffer holding `depth` labels nested in each other.
pub fn nested_labels(depth: usize) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let mut ns = 1_000u64;
    let mut line = |t: &mut String, what: &str| {
        ns += 1;
        let _ = writeln!(t, "{ns:016}        +1: {what}");
    };
    let _ = writeln!(
        t,
        "BATCH 1: device=0 queue=0x1 frame=0 submission=1 cmdbufs=1 queries={} thread=1 submitted=1000",
        2 * depth + 2
    );
    t.push_str("+----- NS -----+ +-- Δ --+  +----- MSG -----\n");
    line(
        &mut t,
        "start_cmd_buffer: cmd=0x10, level=primary, usage=one_time_submit, thread=1",
    );
    for i in 0..depth {
        line(&mut t, &format!("begin_label: label=\"l{i}\""));
    }
    for i in (0..depth).rev() {
        line(&mut t, &format!("end_label: label=\"l{i}\""));
    }
    line(&mut t, "end_cmd_buffer: cmd=0x10");
    let _ = writeln!(t, "ELAPSED: {} ns", ns - 1_000);
    let _ = writeln!(
        t,
        "END OF TRACE: device=0 batches=1 events={} dropped=0",
        2 * depth + 2
    );
    t
}

/// Times `utrace ARGS` (the `utrace` beside this benchmark), `RUNS` times: the median, ms.
fn median_ms(utrace: &Path, args: &[&str]) -> Result<f64, String> {
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let out = Command::new(utrace)
            .args(args)
            .output()
            .map_err(|e| format!("{}: {e}", utrace.display()))?;
        if !out.status.success() {
            return Err(format!(
                "utrace {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[RUNS / 2])
}

/// Prints the table: per nesting, convert's and report's median time and per label.
pub fn measure(utrace: &Path, dir: &Path) -> Result<(), String> {
    println!(
        "utrace convert --to perfetto and utrace report of N nested labels, median of {RUNS} runs"
    );
    println!(
        "{:>10} {:>14} {:>16} {:>14} {:>16}",
        "labels", "convert ms", "convert ns/label", "report ms", "report ns/label"
    );
    for depth in DEPTHS {
        let txt = dir.join(format!("nested-{depth}.txt"));
        std::fs::write(&txt, nested_labels(depth))
            .map_err(|e| format!("{}: {e}", txt.display()))?;
        let pf = dir.join(format!("nested-{depth}.pftrace"));
        let (t, p) = (
            txt.to_str().unwrap_or_default(),
            pf.to_str().unwrap_or_default(),
        );
        let convert = median_ms(utrace, &["convert", "--to", "perfetto", "-o", p, t])?;
        let report = median_ms(utrace, &["report", t])?;
        let per = |ms: f64| ms * 1e6 / depth as f64;
        println!(
            "{depth:>10} {convert:>14.1} {:>16.0} {report:>14.1} {:>16.0}",
            per(convert),
            per(report)
        );
    }
    Ok(())
}
