//! `utrace convert TRACE --to FORMAT -o OUT`: a trace of any format the layer writes,
//! written in another: Chrome's trace events, Perfetto, the layer's json or csv, or the csv
//! of Mesa's u_trace. The output is written whole (see `write_whole`).

mod chrome;
mod layer_formats;
mod mesa_csv;

use std::path::Path;

use crate::ranges::Spec;
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
            let stages = crate::spec::StageSpec::built_in();
            crate::perfetto_write::write(trace, &stages, &mut out)?;
            out
        }
    })
}

pub fn run(input: &Path, target: Target, out: &Path) -> Result<(), String> {
    let trace = crate::load(input)?;
    crate::write_whole::write_whole(out, &render(&trace, target)?)
}

#[cfg(test)]
mod golden;
