//! `utrace run [options] -- APP ARGS...`: runs an application with the layer tracing it
//! (the layer found beside this binary or where the loader looks), shows a live line while
//! it runs, then prints the report of its trace. Signals that would stop `utrace` while the
//! application runs go to the application instead (see `signals`): the report still comes.

mod locate;
mod progress;
mod signals;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::analysis::groups::By;
use crate::write_whole::{for_writer, ForWriter};

/// The formats the layer writes, as `GPU_TRACE_FORMAT` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    Txt,
    Json,
    Csv,
    Perfetto,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Txt => "txt",
            TraceFormat::Json => "json",
            TraceFormat::Csv => "csv",
            TraceFormat::Perfetto => "perfetto",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            TraceFormat::Perfetto => "pftrace",
            other => other.name(),
        }
    }

    /// The format a trace file's name says, as the layer reads `GPU_TRACEFILE`.
    fn of_name(path: &Path) -> Option<TraceFormat> {
        use utrace_format::Format;
        Some(match Format::of_name(&path.to_string_lossy())? {
            Format::Txt => TraceFormat::Txt,
            Format::Json => TraceFormat::Json,
            Format::Csv => TraceFormat::Csv,
            Format::Perfetto => TraceFormat::Perfetto,
        })
    }
}

/// The trace's format: `--format`, else what `--out`'s name says, else txt. A name that
/// says another format than `--format` is refused (the file would not be what its name
/// says).
fn format_for(asked: Option<TraceFormat>, out: Option<&Path>) -> Result<TraceFormat, String> {
    let named = out.and_then(TraceFormat::of_name);
    match (asked, named) {
        (Some(a), Some(n)) if a != n => Err(format!(
            "--out {} names a {} trace but --format {} was asked: name it *.{} or leave out --format",
            out.map(Path::display).map(|d| d.to_string()).unwrap_or_default(),
            n.name(),
            a.name(),
            a.extension()
        )),
        (Some(a), _) => Ok(a),
        (None, named) => Ok(named.unwrap_or(TraceFormat::Txt)),
    }
}

/// `utrace run`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Where the trace goes [default: $TMPDIR/utrace-APP-RANDOM.EXT, APP the program's name].
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// The trace's format [default: what --out's name says (.pftrace, .json, .csv), else txt].
    #[arg(long, value_enum)]
    pub format: Option<TraceFormat>,
    /// Trace only frames FIRST to LAST (from 0).
    #[arg(long, value_name = "FIRST-LAST", value_parser = parse_frames)]
    pub frames: Option<String>,
    /// Tracepoints switched on (+name) or off (-name), as GPU_TRACEPOINTS.
    #[arg(long, value_name = "LIST")]
    pub tracepoints: Option<String>,
    /// What the report groups ranges by.
    #[arg(long, value_enum, default_value = "tracepoint")]
    pub by: By,
    /// Only the N groups with the most GPU time.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// The application and its arguments.
    #[arg(last = true, required = true, value_name = "APP")]
    pub app: Vec<OsString>,
}

/// `FIRST-LAST` (or one frame), as `GPU_TRACE_FRAMES` takes it: checked here, so that a
/// typo is an error before the application starts, not a warning in its output.
pub fn parse_frames(text: &str) -> Result<String, String> {
    let (first, last) = text.split_once('-').unwrap_or((text, text));
    match (first.trim().parse::<u32>(), last.trim().parse::<u32>()) {
        (Ok(a), Ok(b)) if a <= b => Ok(format!("{a}-{b}")),
        _ => Err(format!(
            "{text:?} is not FIRST-LAST (frame numbers from 0, FIRST <= LAST)"
        )),
    }
}

/// Runs the application; its exit status, always (128 + N when signal N killed it), the
/// report printed when it wrote a trace, and said on stderr when it did not.
pub fn run(opts: Args) -> Result<u8, String> {
    let ran = launch(&opts)?;
    let Some(at) = ran.trace else {
        return Ok(ran.code);
    };
    let reported = crate::trace::load(&at).and_then(|t| {
        let options = super::report::Options {
            by: opts.by,
            top: opts.top,
            longest: 5,
            json: false,
            // A trace with GPU counters (however they were asked for): their table follows.
            counters: has_counters(&t),
        };
        super::report::print(&t, &options)
    });
    if let Err(e) = reported {
        eprintln!("utrace: {e}");
    }
    Ok(ran.code)
}

/// A finished run of the application.
pub struct Ran {
    /// Its exit status as this command's (128 + the signal that killed it).
    pub code: u8,
    /// Where its trace is, when it wrote one to a file.
    pub trace: Option<PathBuf>,
}

/// Runs the application traced, as `opts` say, and waits for it.
pub fn launch(opts: &Args) -> Result<Ran, String> {
    let Some((program, args)) = opts.app.split_first() else {
        return Err("no application to run: utrace run [OPTIONS] -- APP [ARGS...]".into());
    };
    let format = format_for(opts.format, opts.out.as_deref())?;
    let layer = locate::layer()?;
    let out = match &opts.out {
        Some(path) => path.clone(),
        None => default_out(program, format)?,
    };
    // By the rules of every output the command writes: a file left from an earlier run
    // (which would be read as this run's trace) is replaced by a new empty one; a device
    // or FIFO is written through; a link or a folder another user could use is refused.
    // `out` as the user named it, for messages; `at`, absolute, where the layer writes.
    let (at, to_file) = match for_writer(&absolute(&out), true)? {
        ForWriter::File(path) => (path, true),
        ForWriter::Through(path) => (path, false),
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env(
            "VK_INSTANCE_LAYERS",
            with_layer(std::env::var_os("VK_INSTANCE_LAYERS")),
        )
        .env("GPU_TRACEFILE", literal(&at))
        .env("GPU_TRACE_FORMAT", format.name());
    if let locate::Layer::Installed(manifest) = &layer {
        eprintln!("utrace: the layer installed by {}", manifest.display());
    }
    if let locate::Layer::Beside(folder) = &layer {
        let mut paths = vec![folder.path().to_path_buf()];
        if let Some(old) = std::env::var_os("VK_ADD_LAYER_PATH") {
            paths.extend(std::env::split_paths(&old));
        }
        let joined = std::env::join_paths(paths).map_err(|e| format!("VK_ADD_LAYER_PATH: {e}"))?;
        cmd.env("VK_ADD_LAYER_PATH", joined);
    }
    if let Some(frames) = &opts.frames {
        cmd.env("GPU_TRACE_FRAMES", frames);
    }
    if let Some(list) = &opts.tracepoints {
        cmd.env("GPU_TRACEPOINTS", list);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(program).display()))?;
    // Ctrl-C and friends stop the application, not this command: it reports after.
    let passed_on = signals::PassedOn::to(child.id());
    let live = (to_file && std::io::stderr().is_terminal())
        .then(|| progress::Live::start(at.clone(), format));
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {}: {e}", Path::new(program).display()))?;
    drop(passed_on);
    drop(live);
    drop(layer);
    let code = exit_code(&status);
    if code != 0 {
        eprintln!(
            "utrace: {} exited with {status}",
            Path::new(program).display()
        );
    }
    if !to_file {
        eprintln!(
            "utrace: the trace went to {}, which is not a file: no report",
            out.display()
        );
        return Ok(Ran { code, trace: None });
    }
    // The empty file made for it is still there, and still empty: nothing was traced.
    if std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_file() && m.len() == 0) {
        let _ = std::fs::remove_file(&at);
        eprintln!(
            "utrace: {} wrote no trace to {} (did it create a Vulkan device?)",
            Path::new(program).display(),
            out.display()
        );
        return Ok(Ran { code, trace: None });
    }
    eprintln!("utrace: trace: {}", out.display());
    Ok(Ran {
        code,
        trace: Some(at),
    })
}

/// `VK_INSTANCE_LAYERS` with utrace first (the other layers the user asked for kept).
fn with_layer(old: Option<OsString>) -> OsString {
    let mut layers = OsString::from("VK_LAYER_utrace");
    if let Some(old) = old.filter(|o| !o.is_empty()) {
        layers.push(":");
        layers.push(old);
    }
    layers
}

/// `$TMPDIR/utrace-APP-RANDOM.EXT`.
fn default_out(program: &OsString, format: TraceFormat) -> Result<PathBuf, String> {
    let stem = Path::new(program)
        .file_name()
        .map_or_else(|| "app".into(), |n| n.to_string_lossy().into_owned());
    // Unguessable: a name another user could foresee (it held the pid) let them plant a
    // link there first and have every run refused.
    let token = crate::write_whole::unguessable().map_err(|e| format!("/dev/urandom: {e}"))?;
    Ok(std::env::temp_dir().join(format!("utrace-{stem}-{token:016x}.{}", format.extension())))
}

/// `path` for `GPU_TRACEFILE`, each `%` doubled: the layer expands `%p` and `%i`, and the
/// file checked and made here must be the one it writes.
fn literal(path: &Path) -> OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut bytes = Vec::new();
    for &b in path.as_os_str().as_bytes() {
        bytes.push(b);
        if b == b'%' {
            bytes.push(b'%');
        }
    }
    OsString::from_vec(bytes)
}

/// The layer writes where the application runs: a relative path is made absolute here.
fn absolute(path: &Path) -> PathBuf {
    std::env::current_dir()
        .map(|d| d.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The application's exit status as this command's (128 + the signal that killed it).
fn exit_code(status: &std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code.clamp(0, 255) as u8,
        (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
        (None, None) => 1,
    }
}

/// Whether `trace` carries GPU counters (pipeline statistics or hardware counters) on any
/// of its events.
fn has_counters(trace: &crate::trace::Trace) -> bool {
    let named = |args: &str| {
        utrace_format::COUNTER_NAMES
            .iter()
            .any(|n| args.contains(n))
            || (args.contains(utrace_format::PERF_PREFIX)
                && utrace_format::text_args::parse(args)
                    .iter()
                    .any(|(k, _)| k.starts_with(utrace_format::PERF_PREFIX)))
    };
    trace
        .batches
        .iter()
        .any(|b| b.events.iter().any(|e| named(&e.args)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_checked_before_the_application_runs() {
        assert_eq!(parse_frames("3-7").as_deref(), Ok("3-7"));
        assert_eq!(parse_frames("5").as_deref(), Ok("5-5"));
        assert!(parse_frames("7-3").is_err());
        assert!(parse_frames("a-b").is_err());
    }

    #[test]
    fn the_format_follows_the_outputs_name_unless_asked() {
        let at = |asked, out: &str| format_for(asked, Some(Path::new(out)));
        assert_eq!(at(None, "x.pftrace"), Ok(TraceFormat::Perfetto));
        assert_eq!(at(None, "x.json"), Ok(TraceFormat::Json));
        assert_eq!(at(None, "x.csv"), Ok(TraceFormat::Csv));
        assert_eq!(at(None, "x.log"), Ok(TraceFormat::Txt));
        assert_eq!(format_for(None, None), Ok(TraceFormat::Txt));
        assert_eq!(at(Some(TraceFormat::Json), "x.log"), Ok(TraceFormat::Json));
        assert_eq!(at(Some(TraceFormat::Csv), "x.csv"), Ok(TraceFormat::Csv));
        let e = at(Some(TraceFormat::Txt), "x.pftrace").unwrap_err();
        assert!(e.contains("x.pftrace") && e.contains("*.txt"), "{e}");
    }

    #[test]
    fn utrace_goes_first_among_the_layers() {
        assert_eq!(with_layer(None), "VK_LAYER_utrace");
        assert_eq!(
            with_layer(Some("VK_LAYER_KHRONOS_validation".into())),
            "VK_LAYER_utrace:VK_LAYER_KHRONOS_validation"
        );
    }

    #[test]
    fn a_trace_with_hardware_counters_has_counters_and_a_label_named_perf_does_not() {
        use crate::trace::{Batch, Event, Trace};
        let trace = |args: &str| Trace {
            batches: vec![Batch {
                events: vec![Event::at(0, "end_render_pass", args)],
                ..Batch::default()
            }],
            origins: Vec::new(),
            notes: vec![],
        };
        assert!(has_counters(&trace("perf_draws=2")));
        assert!(has_counters(&trace("vertex_invocations=3")));
        assert!(!has_counters(&trace("label=\"perf_pass\"")));
    }
}
