//! `utrace bench --runs N --out DIR -- APP ARGS...`: runs the application N times traced,
//! one after another, each run's trace in DIR (`run-01.txt`, ...), skipping its first
//! frames (`--warmup-frames K`: the layer traces frames K onwards) or tracing a window
//! (`--frames A-B`); then `DIR/runs.json` says each run's exit status, time and trace. A
//! run that fails is said and listed, its trace (if any) kept as `run-NN.EXT.failed`, so
//! that `utrace diff` over the folder reads the good runs only; the command then exits 1.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::run::{self, TraceFormat};
use crate::analysis::groups::By;

/// `utrace bench`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// How many times the application runs.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,
    /// Frames skipped at the start of each run (the layer traces from frame K on).
    #[arg(long, value_name = "K", conflicts_with = "frames")]
    pub warmup_frames: Option<u32>,
    /// Trace only frames FIRST to LAST (from 0) of each run.
    #[arg(long, value_name = "FIRST-LAST", value_parser = run::parse_frames)]
    pub frames: Option<String>,
    /// The traces' format.
    #[arg(long, value_enum, default_value = "txt")]
    pub format: TraceFormat,
    /// Tracepoints switched on (+name) or off (-name), as GPU_TRACEPOINTS.
    #[arg(long, value_name = "LIST")]
    pub tracepoints: Option<String>,
    /// The folder the runs' traces and runs.json go in (made if missing; its parent must
    /// exist).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The application and its arguments.
    #[arg(last = true, required = true, value_name = "APP")]
    pub app: Vec<OsString>,
}

/// One run, as runs.json lists it.
struct RunRecord {
    run: u32,
    trace: String,
    exit: u8,
    seconds: f64,
    ok: bool,
}

/// Runs the application `args.runs` times; 0 when every run succeeded and wrote a trace,
/// 1 when one did not (each said, and listed in runs.json).
pub fn run(args: Args) -> Result<u8, String> {
    folder(&args.out)?;
    let frames = match (&args.frames, args.warmup_frames) {
        (Some(window), _) => Some(window.clone()),
        (None, Some(k)) => Some(format!("{k}-{}", u32::MAX)),
        (None, None) => None,
    };
    let mut records = Vec::new();
    for n in 1..=args.runs {
        let name = format!("run-{n:02}.{}", args.format.extension());
        let path = args.out.join(&name);
        eprintln!("utrace: bench: run {n} of {}", args.runs);
        let started = Instant::now();
        let ran = run::launch(&run::Args {
            out: Some(path.clone()),
            format: Some(args.format),
            frames: frames.clone(),
            tracepoints: args.tracepoints.clone(),
            by: By::Tracepoint,
            top: None,
            app: args.app.clone(),
        })?;
        let seconds = started.elapsed().as_secs_f64();
        let ok = ran.code == 0 && ran.trace.is_some();
        let mut trace = name.clone();
        if !ok {
            // Kept for a look, out of the way of a diff over the folder.
            if path.exists() {
                trace = format!("{name}.failed");
                std::fs::rename(&path, args.out.join(&trace))
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            } else {
                trace = String::new();
            }
            eprintln!(
                "utrace: bench: run {n} failed (exit status {}{}); it is listed in runs.json and left out of the folder's traces",
                ran.code,
                if ran.trace.is_none() { ", no trace" } else { "" }
            );
        }
        records.push(RunRecord {
            run: n,
            trace,
            exit: ran.code,
            seconds,
            ok,
        });
    }
    let failed = records.iter().filter(|r| !r.ok).count();
    let json = runs_json(&args, frames.as_deref(), &records);
    crate::write_whole::write_whole(&args.out.join("runs.json"), json.as_bytes())?;
    eprintln!(
        "utrace: bench: {} of {} runs traced in {} (runs.json lists them)",
        records.len() - failed,
        records.len(),
        args.out.display()
    );
    Ok(u8::from(failed > 0))
}

/// `dir`, made (mode 0755) if missing; an existing one must be a folder, not a link, and
/// one no other user may change (its runs are renamed and replaced in it).
fn folder(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {
            if crate::write_whole::folder_closed_to_others(m.uid(), m.gid(), m.mode()) {
                Ok(())
            } else {
                Err(format!(
                    "{}: another user may change this folder (owner uid {}, mode {:o}): give a folder of your own",
                    dir.display(),
                    m.uid(),
                    m.mode() & 0o7777
                ))
            }
        }
        Ok(_) => Err(format!(
            "{}: not a folder (a link or a file is not written through)",
            dir.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::DirBuilder::new()
            .mode(0o755)
            .create(dir)
            .map_err(|e| format!("{}: {e}", dir.display())),
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}

fn runs_json(args: &Args, frames: Option<&str>, records: &[RunRecord]) -> String {
    let runs: Vec<serde_json::Value> = records
        .iter()
        .map(|r| {
            serde_json::json!({
                "run": r.run, "trace": r.trace, "exit": r.exit,
                "seconds": (r.seconds * 1000.0).round() / 1000.0, "ok": r.ok,
            })
        })
        .collect();
    let app: Vec<String> = args
        .app
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let value = serde_json::json!({
        "app": app,
        "frames": frames,
        "warmup_frames": args.warmup_frames,
        "format": args.format.name(),
        "tracepoints": args.tracepoints,
        "runs": runs,
    });
    format!("{value:#}\n")
}
