//! A batch's events paired into the stages Perfetto shows: each begin with its end (the
//! innermost open range of the same kind), markers alone, each knowing the render pass
//! and framebuffer it ran in.

use crate::sink::Event;
use crate::trace::tracepoints::{Payload, RangeKind};

/// A completed range (or marker) of the batch being written.
#[derive(Clone, Copy)]
pub struct Range {
    /// Index of its begin (or marker) event.
    pub begin: usize,
    pub end_ns: u64,
    pub render_pass: u64,
    /// The render pass's framebuffer (Perfetto's render target).
    pub framebuffer: u64,
}

/// A range opened and not yet closed while pairing.
#[derive(Clone, Copy)]
struct Open {
    event: usize,
    range: &'static str,
    /// The render pass it is in (its own handle for a render pass), and its framebuffer.
    render_pass: u64,
    framebuffer: u64,
}

/// The pairing of one batch; reused from batch to batch. A range whose end is not in the
/// batch (a label left open) has no duration and is left out.
#[derive(Default)]
pub struct StagePairs {
    open: Vec<Open>,
    pub ranges: Vec<Range>,
}

impl StagePairs {
    /// Pairs the batch's begins and ends into `self.ranges`.
    pub fn pair(&mut self, events: &[Event<'_>]) {
        self.open.clear();
        self.ranges.clear();
        for (i, e) in events.iter().enumerate() {
            let info = e.info();
            let (render_pass, framebuffer) = self
                .open
                .last()
                .map_or((0, 0), |o| (o.render_pass, o.framebuffer));
            match info.kind {
                RangeKind::Begin => {
                    let (render_pass, framebuffer) = match e.payload() {
                        Payload::StartRenderPass(p) => (p.render_pass, p.framebuffer),
                        _ => (render_pass, framebuffer),
                    };
                    self.open.push(Open {
                        event: i,
                        range: info.range,
                        render_pass,
                        framebuffer,
                    });
                }
                RangeKind::End => {
                    if let Some(at) = self.open.iter().rposition(|o| o.range == info.range) {
                        let o = self.open[at];
                        self.ranges.push(Range {
                            begin: o.event,
                            end_ns: e.ns,
                            render_pass: o.render_pass,
                            framebuffer: o.framebuffer,
                        });
                        self.open.truncate(at);
                    }
                }
                RangeKind::Marker => self.ranges.push(Range {
                    begin: i,
                    end_ns: e.ns,
                    render_pass,
                    framebuffer,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::sink_interface::Words;
    use crate::trace::tracepoints::{
        BeginLabel, EndCmdBuffer, EndDraw, EndRenderPass, LabelRef, StartCmdBuffer, StartDraw,
        StartRenderPass,
    };

    #[test]
    fn ranges_pair_and_know_their_render_pass() {
        let payloads = [
            Payload::StartCmdBuffer(StartCmdBuffer::default()),
            Payload::StartRenderPass(StartRenderPass {
                render_pass: 0x10,
                framebuffer: 0xf,
                ..Default::default()
            }),
            Payload::StartDraw(StartDraw::default()),
            Payload::EndDraw(EndDraw::default()),
            Payload::EndRenderPass(EndRenderPass::default()),
            // Opened and never closed in this batch: no duration, left out.
            Payload::BeginLabel(BeginLabel {
                label: LabelRef { offset: 0, len: 1 },
            }),
            Payload::EndCmdBuffer(EndCmdBuffer::default()),
        ];
        let words: Vec<Words> = payloads.iter().map(|p| Words::of(*p)).collect();
        let events: Vec<Event<'_>> = words
            .iter()
            .enumerate()
            .map(|(i, w)| w.event(100 + 10 * i as u64, b"a", 0xc))
            .collect();
        let mut pairs = StagePairs::default();
        pairs.pair(&events);
        let got: Vec<(usize, u64, u64, u64)> = pairs
            .ranges
            .iter()
            .map(|r| (r.begin, r.end_ns, r.render_pass, r.framebuffer))
            .collect();
        assert_eq!(
            got,
            [(2, 130, 0x10, 0xf), (1, 140, 0x10, 0xf), (0, 160, 0, 0)]
        );
    }
}
