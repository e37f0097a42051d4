//! A completed batch's timestamps (read from its queries where they stayed there) turned
//! into events, in execution order: each command buffer's events with the events of the
//! secondaries it executed spliced in where it executed them.

use std::sync::Arc;

use ash::vk;

use crate::gpu::interface::Backend;
use crate::trace::record::recorded_trace::RecordedTrace;
use crate::trace::sink_interface::Event;
use crate::trace::tracepoints::Payload;

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

/// The timestamps of a completed batch whose queries hold them, in readback order (each
/// trace's region after the previous one's, depth first), into `values`.
pub fn read_queries<'v>(
    backend: &Backend,
    traces: &[Arc<RecordedTrace>],
    total: u32,
    values: &'v mut Vec<u64>,
) -> Result<&'v [u64], vk::Result> {
    values.clear();
    values.resize(total as usize, 0);
    let mut base = 0u32;
    let mut outcome = Ok(());
    for trace in traces {
        trace.visit(&mut |t| {
            for c in &t.copies {
                let at = (base + c.slot) as usize;
                let out = &mut values[at..at + c.count as usize];
                outcome = outcome.and(backend.read_queries(c.pool, c.first, out));
            }
            base += t.slots;
        });
    }
    outcome.map(|()| &values[..])
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
    let mut args = trace.args.as_slice();
    for (i, e) in trace.events.iter().enumerate() {
        while let Some(child) = children.next_if(|c| c.position as usize <= i) {
            dropped += trace_events(&child.trace, values, to_ns, next_base, out);
        }
        let id = usize::from(e.id);
        let n = Payload::WORDS.get(id).copied().unwrap_or(0);
        let (words, rest) = args.split_at(n.min(args.len()));
        args = rest;
        let raw = values.get(base + e.slot as usize).copied().unwrap_or(0);
        let cmd = ash::vk::Handle::as_raw(trace.cmd);
        match Event::new(to_ns(raw), id, words, &trace.strings, cmd) {
            Some(event) if trace.complete => out.push(event),
            // Incomplete, or (never expected) words that do not decode.
            _ => dropped += 1,
        }
    }
    for child in children {
        dropped += trace_events(&child.trace, values, to_ns, next_base, out);
    }
    dropped
}
