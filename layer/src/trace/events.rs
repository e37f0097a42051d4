//! A completed batch's timestamps turned into events, in execution order: each command
//! buffer's events with the events of the secondaries it executed spliced in where it
//! executed them.

use std::sync::Arc;

use super::recorded_trace::RecordedTrace;
use crate::sink::Event;

/// Appends the events of `traces` to `out`. `values` is the batch's readback (each trace's
/// queries in depth-first order, as the copy wrote them) and `to_ns` turns a raw value into
/// nanoseconds. Returns how many events were left out because their trace is incomplete.
pub fn batch_events<'a>(
    traces: &'a [Arc<RecordedTrace>],
    values: &[u64],
    to_ns: &impl Fn(u64) -> u64,
    out: &mut Vec<Event<'a>>,
) -> u64 {
    let mut next_base = 0usize;
    let mut dropped = 0;
    for trace in traces {
        dropped += trace_events(trace, values, to_ns, &mut next_base, out);
    }
    dropped
}

fn trace_events<'a>(
    trace: &'a RecordedTrace,
    values: &[u64],
    to_ns: &impl Fn(u64) -> u64,
    next_base: &mut usize,
    out: &mut Vec<Event<'a>>,
) -> u64 {
    // Readback regions are laid out depth first: this trace's, then each child's in turn.
    let base = *next_base;
    *next_base += trace.slots as usize;
    let mut dropped = 0;
    let mut children = trace.children.iter().peekable();
    for (i, e) in trace.events.iter().enumerate() {
        while let Some(child) = children.next_if(|c| c.position as usize <= i) {
            dropped += trace_events(&child.trace, values, to_ns, next_base, out);
        }
        if trace.complete {
            let raw = values.get(base + e.slot as usize).copied().unwrap_or(0);
            out.push(Event {
                ns: to_ns(raw),
                payload: &e.payload,
                strings: &trace.strings,
                cmd: ash::vk::Handle::as_raw(trace.cmd),
            });
        } else {
            dropped += 1;
        }
    }
    for child in children {
        dropped += trace_events(&child.trace, values, to_ns, next_base, out);
    }
    dropped
}
