//! `utrace`: reads the traces the layer writes (txt, json, csv; the format told from the
//! content) and answers where the GPU time went.

mod groups;
mod ranges;
mod report;
mod stats;
mod trace;

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
    /// Per group of ranges: count, total, mean, p50, p90, p99, max and share of GPU busy
    /// time; each frame's GPU time.
    Report {
        /// A trace the layer wrote (txt, json or csv).
        trace: PathBuf,
        /// What ranges are grouped by.
        #[arg(long, value_enum, default_value = "tracepoint")]
        by: groups::By,
        /// Only the N groups with the most GPU time.
        #[arg(long, value_name = "N")]
        top: Option<usize>,
        /// One JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("utrace: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Report {
            trace,
            by,
            top,
            json,
        } => {
            let t = trace::read(&trace)?;
            for note in &t.notes {
                eprintln!("utrace: {}: {note}", trace.display());
            }
            if t.batches.is_empty() {
                return Err(format!("{}: the trace holds no batch", trace.display()));
            }
            let spec = ranges::Spec::built_in();
            let paired = ranges::pair(&t, &spec);
            let r = report::build(&paired, by);
            if json {
                println!("{}", report::json(&r, top));
            } else {
                print!("{}", report::text(&r, top, by));
            }
            Ok(())
        }
    }
}
