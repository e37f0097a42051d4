//! `utrace`: reads the traces the layer writes (txt, json, csv, Perfetto; the format told
//! from the content) and answers where the GPU time went.

mod capture;
mod convert;
mod diff;
mod groups;
mod histogram;
mod install;
mod layer_files;
mod perfetto_write;
mod queues;
mod ranges;
mod report;
mod report_out;
mod run;
mod significance;
mod spec;
mod stats;
mod stdout;
mod trace;
mod view;
mod write_whole;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "utrace", version, about = "Reads utrace's GPU traces")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Asks a running process that loaded the layer to trace its next N frames (through its
    /// control socket), and returns when the file is complete; or stops a capture.
    Capture {
        /// The process.
        #[arg(long)]
        pid: u32,
        /// How many frames, from the end of the current one.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..), required_unless_present = "stop", conflicts_with = "stop")]
        frames: Option<u32>,
        /// The file to write [default: utrace-PID-capture.EXT here].
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
        /// The capture's format.
        #[arg(long, value_parser = ["txt", "json", "csv"], default_value = "txt")]
        format: String,
        /// Ends the process's capture in progress.
        #[arg(long)]
        stop: bool,
    },
    /// The processes that can be captured (their control sockets).
    List,
    /// Writes the GPU timeline as one self-contained HTML file: a lane per queue, frames as
    /// bands, nested ranges as bars, arguments on hover, zoom (wheel) and pan (drag).
    View {
        /// A trace the layer wrote (txt, json, csv or Perfetto).
        trace: PathBuf,
        /// The HTML file to write.
        #[arg(short = 'o', long = "out", value_name = "OUT")]
        out: PathBuf,
    },
    /// Writes a trace in another format: Chrome trace events, Perfetto, the layer's json or
    /// csv, or the csv of Mesa's u_trace.
    Convert {
        /// A trace the layer wrote (txt, json, csv or Perfetto).
        trace: PathBuf,
        /// The format to write.
        #[arg(long, value_enum)]
        to: convert::Target,
        /// The file to write (written whole: a failed conversion leaves no torn file).
        #[arg(short = 'o', long = "out", value_name = "OUT")]
        out: PathBuf,
    },
    /// Installs the layer built beside this program for the current user
    /// ($XDG_DATA_HOME/vulkan/explicit_layer.d, or implicit_layer.d).
    Install {
        /// As an implicit layer: loaded whenever GPU_TRACE=1 is set, no VK_INSTANCE_LAYERS
        /// needed (never when UTRACE_DISABLE=1).
        #[arg(long)]
        implicit: bool,
    },
    /// Removes what `install` installed.
    Uninstall,
    /// Runs an application with the layer tracing it, then prints the report of its trace.
    /// The layer is the one built beside this program (or one installed where the Vulkan
    /// loader looks); the application's exit status is this command's.
    Run {
        /// Where the trace goes [default: $TMPDIR/utrace-APP-PID.EXT].
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
        /// The trace's format.
        #[arg(long, value_enum, default_value = "txt")]
        format: run::TraceFormat,
        /// Trace only frames FIRST to LAST (from 0).
        #[arg(long, value_name = "FIRST-LAST", value_parser = run::parse_frames)]
        frames: Option<String>,
        /// Tracepoints switched on (+name) or off (-name), as GPU_TRACEPOINTS.
        #[arg(long, value_name = "LIST")]
        tracepoints: Option<String>,
        /// What the report groups ranges by.
        #[arg(long, value_enum, default_value = "tracepoint")]
        by: groups::By,
        /// Only the N groups with the most GPU time.
        #[arg(long, value_name = "N")]
        top: Option<usize>,
        /// The application and its arguments.
        #[arg(last = true, required = true, value_name = "APP")]
        app: Vec<std::ffi::OsString>,
    },
    /// Per group of ranges: count, total, mean, p50, p90, p99, max and share of GPU busy
    /// time; per queue, busy time and overlap; each frame's GPU time, with a histogram; the
    /// longest ranges with their arguments.
    Report {
        /// A trace the layer wrote (txt, json, csv or Perfetto).
        trace: PathBuf,
        /// What ranges are grouped by.
        #[arg(long, value_enum, default_value = "tracepoint")]
        by: groups::By,
        /// Only the N groups with the most GPU time.
        #[arg(long, value_name = "N")]
        top: Option<usize>,
        /// How many of the longest ranges (of the grouping) to list.
        #[arg(long, value_name = "N", default_value_t = 5)]
        longest: usize,
        /// One JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Which groups of ranges got slower (HURT) or faster (HELPED) from trace A to trace B:
    /// the change of each group's median, its 95% bootstrap interval and a Mann–Whitney
    /// p-value. Exit status 1 when something got slower, 0 when not, 2 on errors.
    Diff(diff::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("utrace: {e}");
            ExitCode::from(2)
        }
    }
}

/// The command's exit status: 0, or what the command says (1: `diff` found something
/// slower; `run`: the application's); errors are 2.
fn run(command: Command) -> Result<u8, String> {
    match command {
        Command::Capture {
            pid,
            frames,
            out,
            format,
            stop,
        } => {
            if stop {
                return capture::stop(pid).map(|()| 0);
            }
            let out =
                out.unwrap_or_else(|| PathBuf::from(format!("utrace-{pid}-capture.{format}")));
            capture::capture(pid, frames.unwrap_or(1), &format, &out).map(|()| 0)
        }
        Command::List => capture::list().map(|()| 0),
        Command::View { trace, out } => view::run(&trace, &out).map(|()| 0),
        Command::Convert { trace, to, out } => convert::run(&trace, to, &out).map(|()| 0),
        Command::Install { implicit } => install::install(implicit).map(|()| 0),
        Command::Uninstall => install::uninstall().map(|()| 0),
        Command::Run {
            out,
            format,
            frames,
            tracepoints,
            by,
            top,
            app,
        } => run::run(run::Options {
            out,
            format,
            frames,
            tracepoints,
            by,
            top,
            app,
        }),
        Command::Report {
            trace,
            by,
            top,
            longest,
            json,
        } => {
            let t = load(&trace)?;
            let spec = ranges::Spec::built_in();
            let paired = ranges::pair(&t, &spec);
            let r = report::build(&paired, by, longest);
            if json {
                stdout::print(&format!("{}\n", report_out::json(&r, top)))?;
            } else {
                stdout::print(&report_out::text(&r, top))?;
            }
            Ok(0)
        }
        // Something got slower: status 1.
        Command::Diff(args) => Ok(u8::from(diff::run(&args)?)),
    }
}

/// Reads a trace for a command: what the reader noticed goes to stderr, a trace without a
/// batch is an error.
fn load(path: &std::path::Path) -> Result<trace::Trace, String> {
    let t = trace::read(path)?;
    for note in &t.notes {
        eprintln!("utrace: {}: {note}", path.display());
    }
    if t.batches.is_empty() {
        return Err(format!("{}: the trace holds no batch", path.display()));
    }
    Ok(t)
}
