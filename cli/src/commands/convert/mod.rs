//! `utrace convert TRACE --to FORMAT -o OUT`: a trace of any format the layer writes,
//! written in another: Chrome's trace events, Perfetto, the layer's json or csv, or the csv
//! of Mesa's u_trace. The output is written whole (see `write_whole`).

mod chrome;
mod layer_formats;
mod mesa_csv;

use std::path::PathBuf;

use crate::analysis::ranges::Spec;
use crate::trace::Trace;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev): one track per queue.
    Chrome,
    /// Perfetto GPU render stages, as the layer writes them.
    Perfetto,
    /// The layer's json lines.
    Json,
    /// The layer's csv.
    Csv,
    /// The csv of Mesa's u_trace (`MESA_GPU_TRACES=print_csv`), for Mesa's scripts.
    #[value(name = "mesa-csv")]
    MesaCsv,
}

/// The bytes of `trace` in `target`'s format.
pub fn render(trace: &Trace, target: Target) -> Result<Vec<u8>, String> {
    let spec = Spec::built_in();
    Ok(match target {
        Target::Chrome => chrome::render(trace, &spec).into_bytes(),
        Target::Json => layer_formats::json(trace, &spec).into_bytes(),
        Target::Csv => layer_formats::csv(trace, &spec).into_bytes(),
        Target::MesaCsv => mesa_csv::render(trace).into_bytes(),
        Target::Perfetto => {
            let mut out = Vec::new();
            let stages = crate::tracepoint_spec::StageSpec::built_in();
            crate::trace::perfetto_write::write(trace, &stages, &mut out)?;
            out
        }
    })
}

/// `utrace convert`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A trace the layer wrote (txt, json, csv or Perfetto).
    trace: PathBuf,
    /// The format to write.
    #[arg(long, value_enum)]
    to: Target,
    /// The file to write, whole (a failed conversion leaves no torn file); `-`: standard
    /// output; a device or FIFO is written through; a link only when yours, in a folder
    /// no one else may write.
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    out: PathBuf,
}

pub fn run(args: &Args) -> Result<(), String> {
    let trace = crate::trace::load(&args.trace)?;
    crate::write_whole::write_whole(&args.out, &render(&trace, args.to)?)
}

#[cfg(test)]
mod golden;
