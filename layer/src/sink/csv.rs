//! The `csv` format: a header, then one row per event. Fields that may hold commas or
//! quotes (the arguments) are quoted, with quotes doubled.
//!
//! ```text
//! device,batch,frame,submission,thread,submitted,ns,delta,depth,event,args
//! 0,1,0,1,4242,980012,1000000,0,0,start_cmd_buffer,"cmd=0xabc, level=primary, usage=one_time_submit, thread=4242"
//! ```
//!
//! `thread` is the batch's submitting thread (a command buffer's recording thread is its
//! `start_cmd_buffer`'s `thread` argument), `submitted` when its submit call began on the
//! events' clock (empty where the GPU clock could not be paired with the CPU's).
//!
//! Frame ends are not rows (every row says its frame). The end of a device's trace is one
//! row of the same columns, its counts in `args` (what was written, and `dropped`: events
//! lost, those of batches the output could not write included):
//!
//! ```text
//! 0,,,,,,,,,end_of_trace,"batches=4, events=24, dropped=0"
//! ```
//!
//! With GPU counters (`GPU_TRACE_COUNTERS=pipeline`) the header has a column per
//! statistic and `partial` after `args` (`CSV_HEADER_COUNTERS`), filled on the end events
//! of counted ranges and empty elsewhere; `args` then holds no counters. Hardware counters
//! (`perf:NAME,...`) get a column each the same way, named by their keys
//! (`utrace_format::perf_key`), in the order asked.

use std::fmt::Write;

use parking_lot::Mutex;
use utrace_format::escape::push_csv_field;
use utrace_format::{COUNTER_NAMES, CSV_HEADER, CSV_HEADER_COUNTERS};

use super::origin::PendingHeader;
use super::output::Output;
use super::ranges::each_placed;
use super::text_args;
use super::{BatchInfo, Counters, EventPieces, Sink, TraceSummary};
use crate::digits;

/// The counters' columns of the process's csv traces: their header line and names (then
/// `partial`). Set once with the process's configuration, before any output is made.
pub struct CounterColumns {
    header: &'static str,
    names: Vec<&'static str>,
}

static COUNTER_COLUMNS: Mutex<Option<&'static CounterColumns>> = Mutex::new(None);

/// The process's csv outputs get a column per counter of `names` (GPU counters are on:
/// the pipeline statistics, or the hardware counters' keys), or none.
pub fn use_counter_columns(names: Option<Vec<String>>) {
    let columns = names.map(|names| {
        let names: Vec<&'static str> = names
            .into_iter()
            .map(|n| &*Box::leak(n.into_boxed_str()))
            .collect();
        let header = if names == COUNTER_NAMES {
            CSV_HEADER_COUNTERS
        } else {
            let extra: String = names.iter().map(|n| format!(",{n}")).collect();
            Box::leak(format!("{}{extra},partial\n", CSV_HEADER.trim_end()).into_boxed_str())
        };
        &*Box::leak(Box::new(CounterColumns { header, names }))
    });
    *COUNTER_COLUMNS.lock() = columns;
}

fn counter_columns() -> Option<&'static CounterColumns> {
    *COUNTER_COLUMNS.lock()
}

pub struct CsvSink {
    out: Output,
    args: String,
    counters: Option<&'static CounterColumns>,
    header: PendingHeader,
}

impl CsvSink {
    pub fn new(out: Output, header: PendingHeader) -> CsvSink {
        let counters = counter_columns();
        // One header per output, written before whatever record the output first takes.
        out.set_header(counters.map_or(CSV_HEADER, |c| c.header));
        CsvSink {
            out,
            args: String::new(),
            counters,
            header,
        }
    }

    /// The device's `trace` row (its counter columns empty), before whatever it writes
    /// first.
    fn header_first(&mut self) {
        let columns = self.counters.map(|c| c.names.len());
        let row = self
            .header
            .take("csv", |h, buf| h.push_csv_row(buf, columns));
        if let Some(row) = row {
            self.out.text(row);
        }
    }
}

/// The end row, rendered by the output's writer with what it could not write folded in.
pub fn format_end(s: &TraceSummary, buf: &mut String) {
    let _ = writeln!(
        buf,
        "{},,,,,,,,,end_of_trace,\"batches={}, events={}, dropped={}\"",
        s.device, s.batches, s.events, s.dropped
    );
}

/// [`format_end`] with the counters' columns, empty.
fn format_end_counted(s: &TraceSummary, buf: &mut String) {
    format_end(s, buf);
    buf.pop();
    let columns = counter_columns().map_or(COUNTER_NAMES.len(), |c| c.names.len());
    for _ in 0..=columns {
        buf.push(',');
    }
    buf.push('\n');
}

/// Formats one batch's rows; separate from the sink so it is testable without an output.
/// `spill` is called after each row (the output may take what is formatted so far).
pub fn format_batch(
    buf: &mut String,
    args: &mut String,
    info: &BatchInfo,
    events: &mut dyn EventPieces<'_>,
    spill: &mut dyn FnMut(&mut String),
) {
    format_rows(buf, args, info, events, None, spill);
}

/// [`format_batch`], with the counters' columns when `counters` names them.
fn format_rows(
    buf: &mut String,
    args: &mut String,
    info: &BatchInfo,
    events: &mut dyn EventPieces<'_>,
    counters: Option<&CounterColumns>,
    spill: &mut dyn FnMut(&mut String),
) {
    each_placed(events, |e, depth, delta| {
        let tp = e.info();
        args.clear();
        if counters.is_some() {
            text_args::write_args(args, info, e);
        } else {
            text_args::write(args, info, e);
        }
        for column in [
            u64::from(info.device),
            info.number,
            u64::from(info.frame),
            info.submission,
            u64::from(info.submit.tid),
        ] {
            digits::push_u64(buf, column);
            buf.push(',');
        }
        if let Some(ns) = info.submitted_ns {
            digits::push_u64(buf, ns);
        }
        buf.push(',');
        digits::push_u64(buf, e.ns);
        buf.push(',');
        digits::push_i64(buf, delta);
        buf.push(',');
        digits::push_u64(buf, depth as u64);
        buf.push(',');
        buf.push_str(tp.name);
        buf.push(',');
        // A quote inside the field is doubled (RFC 4180).
        push_csv_field(buf, args);
        if let Some(columns) = counters {
            push_counters(buf, &columns.names, e.counters(info));
        }
        buf.push('\n');
        spill(buf);
    });
}

/// The counters' columns (`names`) of one row: each counter the range shows, then
/// `partial` (`1` or empty); all empty for an event without counters.
fn push_counters(buf: &mut String, names: &[&str], counters: Option<&Counters>) {
    let mut values = [None; COUNTER_NAMES.len()];
    let mut partial = false;
    if let Some(c) = counters {
        for (name, value) in c.shown() {
            match names.iter().position(|n| *n == name) {
                Some(i) if i < values.len() => values[i] = Some(value),
                _ => partial |= name == "partial",
            }
        }
    }
    for v in values.iter().take(names.len()) {
        buf.push(',');
        if let Some(v) = v {
            v.push(buf);
        }
    }
    buf.push(',');
    if partial {
        buf.push('1');
    }
}

impl Sink for CsvSink {
    fn batch(&mut self, info: &BatchInfo, events: &mut dyn EventPieces<'_>) {
        self.header_first();
        let mut buf = self.out.buffer();
        let mut stream = self.out.stream_batch(info.device);
        let counters = self.counters;
        format_rows(&mut buf, &mut self.args, info, events, counters, &mut |b| {
            stream.spill(b)
        });
        stream.finish(events.count(), buf);
    }

    fn end_of_frame(&mut self, _device: u32, _frame: u32) {}

    fn end_of_trace(&mut self, s: &TraceSummary) {
        self.header_first();
        let format = if self.counters.is_some() {
            format_end_counted
        } else {
            format_end
        };
        self.out.end(s.device, s.clone(), format);
    }

    fn drain(&mut self, timeout: std::time::Duration) -> usize {
        self.out.drain(timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::sink_interface::{ListedEvents, Words};
    use crate::trace::tracepoints::{BeginLabel, LabelRef, Payload};

    #[test]
    fn rows_quote_their_arguments() {
        let strings = b"a, \"b\"";
        let label = Payload::BeginLabel(BeginLabel {
            label: LabelRef {
                offset: 0,
                len: strings.len() as u32,
            },
        });
        let label = Words::of(label);
        let events = [label.event(7, strings, 0)];
        let info = BatchInfo {
            number: 3,
            device: 1,
            queue: 0x10,
            frame: 2,
            submission: 4,
            cmdbufs: 1,
            queries: 1,
            submit: crate::sink::SubmitTiming {
                tid: 31,
                ..Default::default()
            },
            ..Default::default()
        };
        let (mut buf, mut args) = (String::new(), String::new());
        format_batch(
            &mut buf,
            &mut args,
            &info,
            &mut ListedEvents::whole(&events),
            &mut |_| {},
        );
        assert_eq!(
            buf,
            "1,3,2,4,31,,7,0,0,begin_label,\"label=\"\"a, \\\"\"b\\\"\"\"\"\"\n"
        );
    }

    /// Rows made in pieces (depth and deltas carried across them) are the rows of one.
    #[test]
    fn pieces_make_the_same_rows() {
        use crate::trace::tracepoints::{EndCmdBuffer, EndLabel, StartCmdBuffer};
        let words = [
            Words::of(Payload::StartCmdBuffer(StartCmdBuffer::default())),
            Words::of(Payload::BeginLabel(BeginLabel {
                label: LabelRef { offset: 0, len: 1 },
            })),
            Words::of(Payload::EndLabel(EndLabel::default())),
            Words::of(Payload::EndCmdBuffer(EndCmdBuffer::default())),
        ];
        let events: Vec<_> = [10, 25, 20, 40]
            .iter()
            .zip(&words)
            .map(|(ns, w)| w.event(*ns, b"x", 0))
            .collect();
        let info = BatchInfo::default();
        let (mut whole, mut args) = (String::new(), String::new());
        let mut one = ListedEvents::whole(&events);
        format_batch(&mut whole, &mut args, &info, &mut one, &mut |_| {});
        assert!(whole
            .lines()
            .nth(2)
            .unwrap()
            .contains(",20,-5,1,end_label,"));
        for piece in 1..=3 {
            let mut rows = String::new();
            let mut pieces = ListedEvents {
                events: &events,
                piece,
            };
            format_batch(&mut rows, &mut args, &info, &mut pieces, &mut |_| {});
            assert_eq!(rows, whole, "pieces of {piece}");
        }
    }
}
