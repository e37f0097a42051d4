//! The csv of Mesa's u_trace (`MESA_GPU_TRACES=print_csv`; `print_csv_start` and
//! `print_csv_event` in src/util/perf/u_trace.c, Mesa 24-25): a header
//! `frame,batch,time_ns,event,`, then per event `FRAME,BATCH,NS,NAME,` followed by the
//! tracepoint's printed arguments (`name=value, ...`, unquoted, as Mesa prints them) and a
//! newline; a blank line at the end. BATCH counts the frame's batches from 0, as Mesa does.

use std::fmt::Write;

use crate::trace::Trace;

pub fn render(trace: &Trace) -> String {
    let mut out = String::from("frame,batch,time_ns,event,\n");
    let mut frame = None;
    let mut batch_in_frame = 0u64;
    for b in &trace.batches {
        if frame != Some((b.device, b.frame)) {
            frame = Some((b.device, b.frame));
            batch_in_frame = 0;
        }
        for e in &b.events {
            let _ = writeln!(
                out,
                "{},{},{},{},{}",
                b.frame, batch_in_frame, e.ns, e.name, e.args
            );
        }
        batch_in_frame += 1;
    }
    out.push('\n');
    out
}
