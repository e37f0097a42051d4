//! The `txt` format, after Mesa's u_trace printer:
//!
//! ```text
//! BATCH 1: device=0 queue=0x55d0c8f0a1b0 frame=0 submission=1 cmdbufs=1 queries=4 thread=4242 submitted=123456780012
//! +----- NS -----+ +-- Δ --+  +----- MSG -----
//! 0000123456789012        +0: start_cmd_buffer: cmd=0x55d0c8f0b000, level=primary, usage=one_time_submit, thread=4242
//! 0000123456790012     +2000:    start_dispatch: group_count_x=64, ..., pipeline=0x55d0c8f0c000, pipeline_name="blur"
//! 0000123456791356     +1344:    end_dispatch
//! 0000123456792356     +1000: end_cmd_buffer: cmd=0x55d0c8f0b000
//! ELAPSED: 3344 ns
//! END OF FRAME 0
//! END OF TRACE: device=0 batches=1 events=2 dropped=0
//! ```
//!
//! Events are indented three spaces per open range; deltas are signed 64-bit. `thread` is
//! the submitting thread on a batch, the recording thread on a command buffer; a draw's or
//! dispatch's `pipeline` is followed by the name the application gave it, if any.
//! `submitted` is when the submit call began, on the events' clock (see
//! [`super::submit_clock`]); absent where the GPU clock could not be paired with the CPU's.

use std::fmt::Write;

use super::origin::PendingHeader;
use super::output::Output;
use super::ranges::each_placed;
use super::text_args;
use super::{BatchInfo, EventPieces, Sink, TraceSummary};
use crate::digits;

pub struct TxtSink {
    out: Output,
    header: PendingHeader,
}

impl TxtSink {
    pub fn new(out: Output, header: PendingHeader) -> TxtSink {
        TxtSink { out, header }
    }

    /// The device's `TRACE` lines, before whatever it writes first.
    fn header_first(&mut self) {
        if let Some(text) = self.header.take("txt", |h, buf| h.push_txt(buf)) {
            self.out.text(text);
        }
    }
}

/// The end record, rendered by the output's writer with what it could not write folded in.
pub fn format_end(s: &TraceSummary, buf: &mut String) {
    let _ = writeln!(
        buf,
        "END OF TRACE: device={} batches={} events={} dropped={}",
        s.device, s.batches, s.events, s.dropped
    );
}

/// Formats one batch; separate from the sink so it is testable without an output. `spill`
/// is called after each event (the output may take what is formatted so far).
pub fn format_batch(
    buf: &mut String,
    info: &BatchInfo,
    events: &mut dyn EventPieces<'_>,
    spill: &mut dyn FnMut(&mut String),
) {
    let _ = write!(
        buf,
        "BATCH {}: device={} queue={:#x} frame={} submission={} cmdbufs={} queries={} thread={}",
        info.number,
        info.device,
        info.queue,
        info.frame,
        info.submission,
        info.cmdbufs,
        info.queries,
        info.submit.tid
    );
    if let Some(ns) = info.submitted_ns {
        buf.push_str(" submitted=");
        digits::push_u64(buf, ns);
    }
    buf.push('\n');
    buf.push_str("+----- NS -----+ +-- Δ --+  +----- MSG -----\n");
    let (first, last) = events.first_last_ns();
    each_placed(events, |e, depth, delta| {
        let tp = e.info();
        digits::push_u64_zero_padded(buf, e.ns, 16);
        buf.push(' ');
        digits::push_signed_right_aligned(buf, delta, 9);
        buf.push_str(": ");
        digits::push_repeated(buf, b' ', 3 * depth);
        buf.push_str(tp.name);
        let before = buf.len();
        buf.push_str(": ");
        let args_start = buf.len();
        text_args::write(buf, info, e);
        if buf.len() == args_start {
            buf.truncate(before);
        }
        buf.push('\n');
        spill(buf);
    });
    let elapsed = last.saturating_sub(first);
    let _ = writeln!(buf, "ELAPSED: {elapsed} ns");
}

impl Sink for TxtSink {
    fn batch(&mut self, info: &BatchInfo, events: &mut dyn EventPieces<'_>) {
        self.header_first();
        // A recycled buffer: formatting allocates nothing in the steady state.
        let mut buf = self.out.buffer();
        let mut stream = self.out.stream_batch(info.device);
        format_batch(&mut buf, info, events, &mut |b| stream.spill(b));
        stream.finish(events.count(), buf);
    }

    fn end_of_frame(&mut self, _device: u32, frame: u32) {
        self.header_first();
        let mut buf = self.out.buffer();
        let _ = writeln!(buf, "END OF FRAME {frame}");
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
    use crate::sink::SubmitTiming;
    use crate::trace::pipeline_names::PipelineNames;
    use crate::trace::sink_interface::{Event, ListedEvents, Words};
    use crate::trace::tracepoints::{
        EndCmdBuffer, EndDispatch, Payload, StartCmdBuffer, StartDispatch,
    };
    use ash::vk;

    fn start(
        cmd: u64,
        level: vk::CommandBufferLevel,
        usage: vk::CommandBufferUsageFlags,
    ) -> Payload {
        Payload::StartCmdBuffer(StartCmdBuffer {
            cmd,
            level,
            usage,
            thread: 4242,
        })
    }

    fn end(cmd: u64) -> Payload {
        Payload::EndCmdBuffer(EndCmdBuffer { cmd })
    }

    fn info() -> BatchInfo<'static> {
        BatchInfo {
            number: 1,
            device: 0,
            queue: 0x10,
            frame: 2,
            submission: 5,
            cmdbufs: 1,
            queries: 2,
            submit: SubmitTiming {
                tid: 4243,
                ..SubmitTiming::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn batch_layout_follows_mesa() {
        let payloads = [
            start(
                0xabc,
                vk::CommandBufferLevel::PRIMARY,
                vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
            ),
            end(0xabc),
        ];
        let words = payloads.map(Words::of);
        let events = [
            words[0].event(1_000_000, &[], 0),
            words[1].event(1_003_344, &[], 0),
        ];
        let mut buf = String::new();
        format_batch(
            &mut buf,
            &info(),
            &mut ListedEvents::whole(&events),
            &mut |_| {},
        );
        assert_eq!(
            buf,
            "BATCH 1: device=0 queue=0x10 frame=2 submission=5 cmdbufs=1 queries=2 thread=4243\n\
             +----- NS -----+ +-- Δ --+  +----- MSG -----\n\
             0000000001000000        +0: start_cmd_buffer: cmd=0xabc, level=primary, usage=one_time_submit, thread=4242\n\
             0000000001003344     +3344: end_cmd_buffer: cmd=0xabc\n\
             ELAPSED: 3344 ns\n"
        );
    }

    #[test]
    fn negative_deltas_and_nesting() {
        let s = start(
            1,
            vk::CommandBufferLevel::SECONDARY,
            vk::CommandBufferUsageFlags::empty(),
        );
        let (s, e) = (Words::of(s), Words::of(end(1)));
        fn ev(ns: u64, w: &Words) -> Event<'_> {
            w.event(ns, &[], 0)
        }
        let events = [ev(10, &s), ev(20, &s), ev(15, &e), ev(40, &e)];
        let mut buf = String::new();
        format_batch(
            &mut buf,
            &info(),
            &mut ListedEvents::whole(&events),
            &mut |_| {},
        );
        // Handed over in pieces (nesting and deltas carried across them) and taken by the
        // output after every event, the parts make the same text.
        for piece in 1..=3 {
            let mut parts = String::new();
            let mut last = String::new();
            format_batch(
                &mut last,
                &info(),
                &mut ListedEvents {
                    events: &events,
                    piece,
                },
                &mut |b| parts.push_str(&std::mem::take(b)),
            );
            assert_eq!(parts + &last, buf, "pieces of {piece}");
        }
        let lines: Vec<&str> = buf.lines().collect();
        assert!(lines[3].ends_with(
            "       +10:    start_cmd_buffer: cmd=0x1, level=secondary, usage=none, thread=4242"
        ));
        assert!(lines[4].contains("       -5:    end_cmd_buffer"));
        assert!(lines[5].contains("      +25: end_cmd_buffer"));
        assert_eq!(lines[6], "ELAPSED: 30 ns");
    }

    /// A dispatch's pipeline is followed by its name once the application gave it one.
    #[test]
    fn pipelines_are_named() {
        let dispatch = |pipeline| {
            Words::of(Payload::StartDispatch(StartDispatch {
                group_count_x: 1,
                group_count_y: 1,
                group_count_z: 1,
                base_x: 0,
                base_y: 0,
                base_z: 0,
                pipeline,
            }))
        };
        let (named, unnamed) = (dispatch(0x5c00), dispatch(0x5d00));
        let end = Words::of(Payload::EndDispatch(EndDispatch {}));
        let names = PipelineNames::of(&[(0x5c00, "blur \"x\"")]);
        let info = BatchInfo {
            pipeline_names: Some(&names),
            ..info()
        };
        let events = [
            named.event(10, &[], 0),
            end.event(20, &[], 0),
            unnamed.event(30, &[], 0),
            end.event(40, &[], 0),
        ];
        let mut buf = String::new();
        format_batch(
            &mut buf,
            &info,
            &mut ListedEvents::whole(&events),
            &mut |_| {},
        );
        let lines: Vec<&str> = buf.lines().collect();
        assert!(
            lines[2].ends_with("pipeline=0x5c00, pipeline_name=\"blur \\\"x\\\"\""),
            "{}",
            lines[2]
        );
        assert!(
            lines[4].ends_with("base_z=0, pipeline=0x5d00"),
            "{}",
            lines[4]
        );
    }
}
