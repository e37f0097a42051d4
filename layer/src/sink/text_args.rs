//! An event's arguments as the txt and csv formats write them: `name=value, ...`, a draw's
//! or dispatch's pipeline followed by the name the application gave it, and a range's
//! pipeline statistics at its end event (`GPU_TRACE_COUNTERS=pipeline`:
//! `compute_invocations=4096`).

use utrace_format::escape::push_quoted;

use super::{BatchInfo, Event};

pub fn write(out: &mut String, info: &BatchInfo, e: &Event<'_>) {
    let start = out.len();
    write_args(out, info, e);
    if let Some(counters) = e.counters(info) {
        for (name, value) in counters.shown() {
            if out.len() > start {
                out.push_str(", ");
            }
            out.push_str(name);
            out.push('=');
            value.push(out);
        }
    }
}

/// The arguments alone, without the counters (the csv format gives those columns).
pub fn write_args(out: &mut String, info: &BatchInfo, e: &Event<'_>) {
    let payload = e.payload();
    payload.write_args(out, e.strings);
    if let Some(name) = payload.pipeline().and_then(|p| info.pipeline_name(p)) {
        out.push_str(", pipeline_name=");
        push_quoted(out, name.as_bytes());
    }
}
