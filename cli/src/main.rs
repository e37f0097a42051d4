//! `utrace`: reads the traces the layer writes (txt, json, csv, Perfetto; the format told
//! from the content) and answers where the GPU time went.
//!
//! From the top down: `commands` (one module per subcommand), `analysis` (ranges, groups,
//! statistics), `trace` (the readers, `load`, and the Perfetto writer), `tracepoint_spec` (the
//! tracepoint spec the layer was built with); the format's shared definitions are the
//! `utrace-format` crate's.

mod analysis;
mod commands;
mod control_socket;
mod layer_files;
mod stdout;
mod trace;
mod tracepoint_spec;
mod write_whole;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use commands::{
    bench, capture, convert, counters, diff, docs, install, list, report, run, top, view,
};

#[derive(Parser)]
#[command(
    name = "utrace",
    version = env!("UTRACE_VERSION"),
    about = "Runs Vulkan applications under the utrace layer, and reports, compares, converts and views their GPU traces"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Asks a running process that loaded the layer to trace its next N frames (through its
    /// control socket), and returns when the file is complete; or stops a capture.
    Capture(capture::Args),
    /// The processes that can be captured (their control sockets).
    List,
    /// A live view of a running process that loaded the layer: frames per second, GPU time
    /// per frame (last, p50, p99, a sparkline) and the top ranges of the last second,
    /// refreshed each second until `q` or Ctrl-C (one line a second when stdout is not a
    /// terminal). The process traces only while watched.
    Top(top::Args),
    /// Writes the GPU timeline as one self-contained HTML file: a lane per queue, frames as
    /// bands, nested ranges as bars, arguments on hover, zoom (wheel) and pan (drag).
    View(view::Args),
    /// Writes a trace in another format: Chrome trace events, Perfetto, the layer's json or
    /// csv, or the csv of Mesa's u_trace.
    Convert(convert::Args),
    /// Installs the layer built beside this program for the current user
    /// ($XDG_DATA_HOME/vulkan/explicit_layer.d, or implicit_layer.d).
    Install(install::Args),
    /// Removes what `install` installed.
    Uninstall,
    /// Runs an application with the layer tracing it, then prints the report of its trace.
    /// The layer is the one built beside this program (or one installed where the Vulkan
    /// loader looks); the application's exit status is this command's.
    Run(run::Args),
    /// Runs an application N times traced, one trace per run in a folder (and runs.json
    /// saying each run's exit status and time), for `utrace diff` to compare folders of runs.
    Bench(bench::Args),
    /// Per group of ranges: count, total, mean, p50, p90, p99, max and share of GPU busy
    /// time; per queue, busy time and overlap; each frame's GPU time, with a histogram; the
    /// longest ranges with their arguments.
    Report(report::Args),
    /// Which groups of ranges got slower (HURT) or faster (HELPED) from trace A to trace B
    /// (or from a folder of runs to another, run by run): the change of each group's
    /// median, its 95% bootstrap interval and a Mann–Whitney p-value. Traces whose headers
    /// disagree on what changes the timing are refused. Exit status 1 when something got
    /// slower, 0 when not, 2 on errors.
    Diff(diff::Args),
    /// The hardware counters each Vulkan device offers (VK_KHR_performance_query), per
    /// queue family: unit, scope, storage, description and the passes they need; "none"
    /// for a device without the extension.
    Counters(counters::Args),
    /// Prints the shell completions of this command (bash: `source <(utrace completions
    /// bash)`).
    Completions(docs::CompletionsArgs),
    /// Writes the man pages of this command and of each of its commands into a folder.
    Man(docs::ManArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.command) {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("utrace: {e}");
            ExitCode::from(2)
        }
    }
}

/// The command's exit status: 0, or what the command says (1: `diff` found something
/// slower; `run`: the application's); errors are 2.
fn dispatch(command: Command) -> Result<u8, String> {
    match command {
        Command::Capture(args) => capture::run(args).map(|()| 0),
        Command::List => list::run().map(|()| 0),
        Command::Top(args) => top::run(args).map(|()| 0),
        Command::View(args) => view::run(&args).map(|()| 0),
        Command::Convert(args) => convert::run(&args).map(|()| 0),
        Command::Install(args) => install::run(&args).map(|()| 0),
        Command::Uninstall => install::uninstall().map(|()| 0),
        Command::Run(args) => run::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Report(args) => report::run(&args).map(|()| 0),
        // Something got slower: status 1.
        Command::Diff(args) => Ok(u8::from(diff::run(&args)?)),
        Command::Counters(args) => counters::run(&args).map(|()| 0),
        Command::Completions(args) => docs::completions(&args, Cli::command()).map(|()| 0),
        Command::Man(args) => docs::man(&args, Cli::command()).map(|()| 0),
    }
}
