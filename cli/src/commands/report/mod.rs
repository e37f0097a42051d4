//! `utrace report TRACE`: where the GPU time went, per group of ranges, per queue and per
//! frame, and the longest ranges themselves (built by [`crate::analysis::report`]), as a
//! table or one JSON object ([`output`]).

pub mod output;

use std::path::PathBuf;

use crate::analysis::groups::By;
use crate::analysis::ranges::{pair, Spec};
use crate::analysis::report;
use crate::trace::Trace;

/// `utrace report`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A trace the layer wrote (txt, json, csv or Perfetto).
    trace: PathBuf,
    /// What ranges are grouped by.
    #[arg(long, value_enum, default_value = "tracepoint")]
    by: By,
    /// Only the N groups with the most GPU time.
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// How many of the longest ranges (of the grouping) to list.
    #[arg(long, value_name = "N", default_value_t = 5)]
    longest: usize,
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &Args) -> Result<(), String> {
    let t = crate::trace::load(&args.trace)?;
    print(&t, args.by, args.top, args.longest, args.json)
}

/// Prints the report of `trace` to stdout (`utrace run` prints its trace's so too).
pub fn print(
    trace: &Trace,
    by: By,
    top: Option<usize>,
    longest: usize,
    json: bool,
) -> Result<(), String> {
    let spec = Spec::built_in();
    let paired = pair(trace, &spec);
    let r = report::build(trace, &paired, by, longest);
    if json {
        crate::stdout::print(&format!("{}\n", output::json(&r, top)))
    } else {
        crate::stdout::print_text(&output::text(&r, top))
    }
}
