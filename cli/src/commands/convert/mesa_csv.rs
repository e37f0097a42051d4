//! The csv of Mesa's u_trace (`MESA_GPU_TRACES=print_csv`), so that scripts written for
//! Mesa's drivers read utrace's traces. Matched against src/util/perf/u_trace.c and
//! u_trace.py of Mesa 24-25 (the ones with `MESA_GPU_TRACES`, indirect captures and range
//! statistics): `print_csv_start` writes the header `frame,batch,time_ns,event,`;
//! `print_csv_event` writes `%u,%u,%PRIu64,%s,` (frame_nr, batch_nr, ns, the tracepoint's
//! name) and then the tracepoint's `print` callback, or a bare newline when it has none;
//! `print_csv_end` writes one empty line when the context ends. The callbacks u_trace.py
//! generates print each argument as `name=value, ` (a trailing `, ` after the last too)
//! then `\n`, and tracepoints without arguments have none. `batch_nr` counts the batches of
//! the current frame from 0 (`process_flush` resets it when a frame starts).
//!
//! Mesa writes one such stream per `u_trace_context` (a device); a trace of several devices
//! is written as one stream per device, one after the other, each as Mesa would write it.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::trace::{Batch, Trace};

pub fn render(trace: &Trace) -> String {
    let mut devices: BTreeMap<u32, Vec<&Batch>> = BTreeMap::new();
    for b in &trace.batches {
        devices.entry(b.device).or_default().push(b);
    }
    let mut out = String::new();
    for batches in devices.values() {
        out.push_str("frame,batch,time_ns,event,\n");
        let mut frame = None;
        let mut batch_in_frame = 0u64;
        for b in batches {
            if frame != Some(b.frame) {
                frame = Some(b.frame);
                batch_in_frame = 0;
            }
            for e in &b.events {
                let _ = write!(out, "{},{},{},{},", b.frame, batch_in_frame, e.ns, e.name);
                // The arguments are already `name=value, ...` (the layer prints them so).
                if !e.args.is_empty() {
                    out.push_str(&e.args);
                    out.push_str(", ");
                }
                out.push('\n');
            }
            batch_in_frame += 1;
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Event;

    fn batch(device: u32, frame: u64, events: &[(u64, &str, &str)]) -> Batch {
        Batch {
            device,
            frame,
            events: events
                .iter()
                .map(|&(ns, name, args)| Event {
                    ns,
                    name: name.into(),
                    args: args.into(),
                })
                .collect(),
            ..Batch::default()
        }
    }

    /// Mesa's layout to the byte: its header, batches counted per frame, its trailing
    /// `, ` after the arguments, its empty line at the end of each device's stream.
    #[test]
    fn the_layout_of_mesas_print_csv() {
        let trace = Trace {
            batches: vec![
                batch(
                    0,
                    0,
                    &[(10, "start_draw", "vertex_count=3, label=\"a, b\"")],
                ),
                batch(0, 0, &[(20, "end_draw", "")]),
                batch(1, 0, &[(15, "end_draw", "")]),
                batch(0, 1, &[(30, "end_draw", "")]),
            ],
            origins: Vec::new(),
            notes: vec![],
        };
        assert_eq!(
            render(&trace),
            "frame,batch,time_ns,event,\n\
             0,0,10,start_draw,vertex_count=3, label=\"a, b\", \n\
             0,1,20,end_draw,\n\
             1,0,30,end_draw,\n\
             \n\
             frame,batch,time_ns,event,\n\
             0,0,15,end_draw,\n\
             \n"
        );
    }
}
