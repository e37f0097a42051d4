//! `utrace report TRACE`: where the GPU time went, per group of ranges, per queue and per
//! frame, and the longest ranges themselves (built by [`crate::analysis::report`]), as a
//! table or one JSON object ([`output`]).

pub mod counters_output;
pub mod hardware_output;
pub mod output;

use std::path::PathBuf;

use crate::analysis::groups::By;
use crate::analysis::ranges::{pair, Spec};
use crate::analysis::report;
use crate::analysis::{counters, hardware_counters};
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
    /// Also each group's pipeline statistics (a trace made with
    /// GPU_TRACE_COUNTERS=pipeline): their sums, fragment shader invocations per µs, µs per
    /// 1,000 primitives and compute shader invocations per range. A label's are those of
    /// the ranges inside it.
    #[arg(long)]
    counters: bool,
}

pub fn run(args: &Args) -> Result<(), String> {
    let t = crate::trace::load(&args.trace)?;
    let options = Options {
        by: args.by,
        top: args.top,
        longest: args.longest,
        json: args.json,
        counters: args.counters,
    };
    print(&t, &options)
}

/// What a report shows.
pub struct Options {
    pub by: By,
    /// Only the N groups with the most GPU time.
    pub top: Option<usize>,
    /// How many of the longest ranges to list.
    pub longest: usize,
    pub json: bool,
    /// Each group's pipeline statistics too.
    pub counters: bool,
}

/// Prints the report of `trace` to stdout (`utrace run` prints its trace's so too).
pub fn print(trace: &Trace, o: &Options) -> Result<(), String> {
    let spec = Spec::built_in();
    let paired = pair(trace, &spec);
    let r = report::build(trace, &paired, o.by, o.longest);
    let hardware = o.counters.then(|| hardware_counters::rows(&paired, o.by));
    // A trace has one kind of counters: pipeline statistics unless it has hardware ones
    // (whose unmeasured ranges also say `partial=1`).
    let counters = o.counters.then(|| match &hardware {
        Some((keys, _)) if !keys.is_empty() => Vec::new(),
        _ => counters::rows(&paired, o.by),
    });
    if o.json {
        let mut value = output::json(&r, o.top);
        if let Some(rows) = &counters {
            value["counters"] = counters_output::json(rows, o.top);
        }
        if let Some((keys, rows)) = &hardware {
            value["hardware_counters"] = hardware_output::json(keys, rows, o.top);
        }
        value["origins"] = origins_json(trace);
        crate::stdout::print(&format!("{value}\n"))
    } else {
        // Where the trace comes from, a line per device, where the trace says.
        let mut text: String = trace
            .origins
            .iter()
            .map(|o| format!("from: {}\n", o.summary()))
            .collect();
        text.push_str(&output::text(&r, o.top));
        let no_hardware = hardware.as_ref().is_none_or(|(keys, _)| keys.is_empty());
        if let Some(rows) = counters.as_ref().filter(|r| !r.is_empty() || no_hardware) {
            text.push_str(&counters_output::text(o.by.heading(), rows, o.top));
        }
        if let Some((keys, rows)) = &hardware {
            text.push_str(&hardware_output::text(o.by.heading(), keys, rows, o.top));
        }
        crate::stdout::print_text(&text)
    }
}

/// Each device's header as `{device, fields: {key: value}}`, fields in the order read.
fn origins_json(trace: &Trace) -> serde_json::Value {
    trace
        .origins
        .iter()
        .map(|o| {
            let fields: serde_json::Map<String, serde_json::Value> = o
                .fields
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::json!({"device": o.device, "fields": fields})
        })
        .collect()
}
