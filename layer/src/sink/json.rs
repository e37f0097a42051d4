//! The `json` format: JSON Lines, one object per line, so that the output stays valid JSON
//! line by line even if the process dies mid-trace (each line is written whole and
//! flushed). Three kinds of lines, in the order of the txt format's blocks:
//!
//! ```text
//! {"type":"batch","device":0,"batch":1,"queue":"0x1","frame":0,"submission":1,"thread":4242,"cmdbufs":1,"queries":2,"elapsed_ns":3344,"submitted_ns":980012,
//!  "events":[{"ns":1000000,"delta":0,"depth":0,"name":"start_cmd_buffer","args":{"cmd":"0xabc","level":"primary",...,"thread":4242}},
//!            {"ns":1002000,...,"name":"start_dispatch","args":{...,"pipeline":"0x5c00","pipeline_name":"blur"}},...]}
//! {"type":"end_of_frame","device":0,"frame":0}
//! {"type":"end_of_trace","device":0,"batches":1,"events":2,"dropped":0}
//! ```
//!
//! Arguments keep their kind: numbers and booleans bare, everything else a string. A batch's
//! `thread` is its submitting thread, `submitted_ns` when its submit call began on the
//! events' clock (absent where the GPU clock could not be paired with the CPU's); a draw's
//! or dispatch's `pipeline` is followed by the name the application gave it, if any.

use std::fmt::Write;

use utrace_format::escape::push_json_string;

use super::origin::PendingHeader;
use super::output::Output;
use super::ranges::each_placed;
use super::{BatchInfo, EventPieces, Sink, TraceSummary};
use crate::digits;
use crate::trace::tracepoints::ValueKind;

pub struct JsonSink {
    out: Output,
    /// Reused for each argument's text before it is escaped.
    arg: String,
    header: PendingHeader,
}

impl JsonSink {
    pub fn new(out: Output, header: PendingHeader) -> JsonSink {
        JsonSink {
            out,
            arg: String::new(),
            header,
        }
    }

    /// The device's `{"type":"trace",...}` line, before whatever it writes first.
    fn header_first(&mut self) {
        if let Some(text) = self.header.take("json", |h, buf| h.push_json(buf)) {
            self.out.text(text);
        }
    }
}

/// The end record, rendered by the output's writer with what it could not write folded in.
pub fn format_end(s: &TraceSummary, buf: &mut String) {
    let _ = writeln!(
        buf,
        "{{\"type\":\"end_of_trace\",\"device\":{},\"batches\":{},\"events\":{},\"dropped\":{}}}",
        s.device, s.batches, s.events, s.dropped
    );
}

/// Formats one batch as a line; separate from the sink so it is testable without an output.
/// `spill` is called after each event (the output may take what is formatted so far).
pub fn format_batch(
    buf: &mut String,
    arg: &mut String,
    info: &BatchInfo,
    events: &mut dyn EventPieces<'_>,
    spill: &mut dyn FnMut(&mut String),
) {
    let (first, last) = events.first_last_ns();
    let elapsed = last.saturating_sub(first);
    let _ = write!(
        buf,
        "{{\"type\":\"batch\",\"device\":{},\"batch\":{},\"queue\":\"{:#x}\",\"frame\":{},\"submission\":{},\"thread\":{},\"cmdbufs\":{},\"queries\":{},\"elapsed_ns\":{elapsed},",
        info.device, info.number, info.queue, info.frame, info.submission, info.submit.tid, info.cmdbufs, info.queries
    );
    if let Some(ns) = info.submitted_ns {
        buf.push_str("\"submitted_ns\":");
        digits::push_u64(buf, ns);
        buf.push(',');
    }
    buf.push_str("\"events\":[");
    let mut written = 0u64;
    each_placed(events, |e, depth, delta| {
        let tp = e.info();
        let payload = e.payload();
        if written > 0 {
            buf.push(',');
        }
        written += 1;
        buf.push_str("{\"ns\":");
        digits::push_u64(buf, e.ns);
        buf.push_str(",\"delta\":");
        digits::push_i64(buf, delta);
        buf.push_str(",\"depth\":");
        digits::push_u64(buf, depth as u64);
        buf.push_str(",\"name\":\"");
        buf.push_str(tp.name);
        buf.push_str("\",\"args\":{");
        for (k, field) in tp.fields.iter().enumerate() {
            if k > 0 {
                buf.push(',');
            }
            buf.push('"');
            buf.push_str(field.name);
            buf.push_str("\":");
            arg.clear();
            payload.write_arg(k, arg, e.strings);
            match field.kind {
                // A count the device reads at execution prints as a word (`indirect`).
                ValueKind::Number if !arg.starts_with(|c: char| c.is_ascii_digit() || c == '-') => {
                    push_json_string(buf, arg)
                }
                ValueKind::Number | ValueKind::Bool | ValueKind::Quoted => buf.push_str(arg),
                ValueKind::Text => push_json_string(buf, arg),
            }
        }
        if let Some(name) = payload.pipeline().and_then(|p| info.pipeline_name(p)) {
            buf.push_str(",\"pipeline_name\":");
            push_json_string(buf, name);
        }
        if let Some(counters) = e.counters(info) {
            for (k, (name, value)) in counters.shown().enumerate() {
                if k > 0 || !tp.fields.is_empty() {
                    buf.push(',');
                }
                buf.push('"');
                buf.push_str(name);
                buf.push_str("\":");
                value.push_json(buf);
            }
        }
        buf.push_str("}}");
        spill(buf);
    });
    buf.push_str("]}\n");
}

impl Sink for JsonSink {
    fn batch(&mut self, info: &BatchInfo, events: &mut dyn EventPieces<'_>) {
        self.header_first();
        let mut buf = self.out.buffer();
        let mut stream = self.out.stream_batch(info.device);
        format_batch(&mut buf, &mut self.arg, info, events, &mut |b| {
            stream.spill(b)
        });
        stream.finish(events.count(), buf);
    }

    fn end_of_frame(&mut self, device: u32, frame: u32) {
        self.header_first();
        let mut buf = self.out.buffer();
        let _ = writeln!(
            buf,
            "{{\"type\":\"end_of_frame\",\"device\":{device},\"frame\":{frame}}}"
        );
        self.out.text(buf);
    }

    fn end_of_trace(&mut self, s: &TraceSummary) {
        self.header_first();
        self.out.end(s.device, s.clone(), format_end);
    }

    fn drain(&mut self, timeout: std::time::Duration) -> usize {
        self.out.drain(timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::sink_interface::{ListedEvents, Words};
    use crate::trace::tracepoints::{BeginLabel, EndCmdBuffer, LabelRef, Payload};

    #[test]
    fn lines_are_json_with_kinds_kept() {
        let strings = b"a \"quoted\", label\x01";
        let label = Payload::BeginLabel(BeginLabel {
            label: LabelRef {
                offset: 0,
                len: strings.len() as u32,
            },
        });
        let end = Payload::EndCmdBuffer(EndCmdBuffer { cmd: 0xabc });
        let (label, end) = (Words::of(label), Words::of(end));
        let events = [label.event(10, strings, 0), end.event(25, strings, 0)];
        let info = BatchInfo {
            number: 1,
            device: 0,
            queue: 0x10,
            frame: 2,
            submission: 5,
            cmdbufs: 1,
            queries: 2,
            submit: crate::sink::SubmitTiming {
                tid: 31,
                ..Default::default()
            },
            ..Default::default()
        };
        let (mut buf, mut arg) = (String::new(), String::new());
        format_batch(
            &mut buf,
            &mut arg,
            &info,
            &mut ListedEvents::whole(&events),
            &mut |_| {},
        );
        // In pieces of one event (the separators and deltas carried across), taken by the
        // output after every event: the same line.
        let (mut parts, mut last) = (String::new(), String::new());
        let mut pieces = ListedEvents {
            events: &events,
            piece: 1,
        };
        format_batch(&mut last, &mut arg, &info, &mut pieces, &mut |b| {
            parts.push_str(&std::mem::take(b))
        });
        assert_eq!(parts + &last, buf);
        assert_eq!(
            buf,
            "{\"type\":\"batch\",\"device\":0,\"batch\":1,\"queue\":\"0x10\",\"frame\":2,\"submission\":5,\"thread\":31,\"cmdbufs\":1,\"queries\":2,\"elapsed_ns\":15,\"events\":[\
             {\"ns\":10,\"delta\":0,\"depth\":0,\"name\":\"begin_label\",\"args\":{\"label\":\"a \\\"quoted\\\", label\\u0001\"}},\
             {\"ns\":25,\"delta\":15,\"depth\":1,\"name\":\"end_cmd_buffer\",\"args\":{\"cmd\":\"0xabc\"}}]}\n"
        );
    }

    /// A dispatch's pipeline is followed by the name the application gave it.
    #[test]
    fn pipelines_are_named() {
        use crate::trace::pipeline_names::PipelineNames;
        use crate::trace::tracepoints::StartDispatchIndirect;
        let dispatch = Words::of(Payload::StartDispatchIndirect(StartDispatchIndirect {
            buffer: 0xb0,
            offset: 16,
            pipeline: 0x5c00,
        }));
        let names = PipelineNames::of(&[(0x5c00, "blur")]);
        let info = BatchInfo {
            pipeline_names: Some(&names),
            ..Default::default()
        };
        let (mut buf, mut arg) = (String::new(), String::new());
        format_batch(
            &mut buf,
            &mut arg,
            &info,
            &mut ListedEvents::whole(&[dispatch.event(1, &[], 0)]),
            &mut |_| {},
        );
        assert!(
            buf.contains(
                r#""args":{"buffer":"0xb0","offset":16,"pipeline":"0x5c00","pipeline_name":"blur"}"#
            ),
            "{buf}"
        );
    }
}
