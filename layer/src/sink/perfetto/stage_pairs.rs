//! A batch's events paired into the stages Perfetto shows: each begin with its end (the
//! innermost open range of the same kind), markers alone, each knowing the render pass
//! and framebuffer it ran in.

use crate::sink::{Event, EventPieces};
use crate::trace::tracepoints::{Payload, RangeKind};

/// A completed range (or marker) of the batch being written.
#[derive(Clone, Copy)]
pub struct Range<'a> {
    /// Its begin (or marker) event.
    pub begin: Event<'a>,
    /// Its end event (the marker itself for a marker), which carries its counters.
    pub end: Event<'a>,
    pub end_ns: u64,
    pub render_pass: u64,
    /// The render pass's framebuffer (Perfetto's render target).
    pub framebuffer: u64,
}

/// A range opened and not yet closed while pairing.
#[derive(Clone, Copy)]
struct Open<'a> {
    event: Event<'a>,
    range: &'static str,
    /// The render pass it is in (its own handle for a render pass), and its framebuffer.
    render_pass: u64,
    framebuffer: u64,
}

/// The pairing of one batch, event by event: the ranges still open are carried from one
/// piece of the batch to the next. A range whose end is not in the batch (a label left
/// open) has no duration and is left out.
#[derive(Default)]
pub struct StagePairs<'a> {
    open: Vec<Open<'a>>,
}

impl<'a> StagePairs<'a> {
    /// The range `e` completes: the innermost open range its end closes, or a marker.
    pub fn push(&mut self, e: &Event<'a>) -> Option<Range<'a>> {
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
                    event: *e,
                    range: info.range,
                    render_pass,
                    framebuffer,
                });
                None
            }
            RangeKind::End => {
                let at = self.open.iter().rposition(|o| o.range == info.range)?;
                let o = self.open[at];
                self.open.truncate(at);
                Some(Range {
                    begin: o.event,
                    end: *e,
                    end_ns: e.ns,
                    render_pass: o.render_pass,
                    framebuffer: o.framebuffer,
                })
            }
            RangeKind::Marker => Some(Range {
                begin: *e,
                end: *e,
                end_ns: e.ns,
                render_pass,
                framebuffer,
            }),
        }
    }
}

/// Pairs a batch's events as its pieces come and hands its stages to `f` `per_slice` at a
/// time (fewer in the last slice; one empty slice for a batch without any), with whether
/// the slice follows another: the same slices, whatever the pieces.
pub fn each_slice<'a>(
    events: &mut dyn EventPieces<'a>,
    per_slice: usize,
    f: &mut dyn FnMut(&[Range<'a>], bool),
) {
    let mut pairs = StagePairs::default();
    let mut slice: Vec<Range<'a>> = Vec::with_capacity(per_slice.min(events.count() as usize));
    let mut follows = false;
    events.each_piece(&mut |piece| {
        for e in piece {
            let Some(range) = pairs.push(e) else {
                continue;
            };
            // A full slice is written once a stage follows it: the last slice is never empty.
            if slice.len() == per_slice {
                f(&slice, follows);
                follows = true;
                slice.clear();
            }
            slice.push(range);
        }
    });
    f(&slice, follows);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::sink_interface::Words;
    use crate::trace::tracepoints::{
        BeginLabel, EndCmdBuffer, EndDraw, EndLabel, EndRenderPass, LabelRef, StartCmdBuffer,
        StartDraw, StartRenderPass,
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
        let got: Vec<(u64, u64, u64, u64)> = events
            .iter()
            .filter_map(|e| pairs.push(e))
            .map(|r| (r.begin.ns, r.end_ns, r.render_pass, r.framebuffer))
            .collect();
        assert_eq!(
            got,
            [
                (120, 130, 0x10, 0xf),
                (110, 140, 0x10, 0xf),
                (100, 160, 0, 0)
            ]
        );
    }

    /// The slices a batch's stages are written in, as (follows, [(begin, end, pass, fb)]).
    type Slices = Vec<(bool, Vec<(u64, u64, u64, u64)>)>;

    fn slices(events: &mut dyn EventPieces<'_>, per_slice: usize) -> Slices {
        let mut got = Slices::new();
        each_slice(events, per_slice, &mut |slice, follows| {
            let stages = slice
                .iter()
                .map(|r| (r.begin.ns, r.end_ns, r.render_pass, r.framebuffer))
                .collect();
            got.push((follows, stages));
        });
        got
    }

    /// Ranges that span pieces (the command buffer, the render pass, a label around every
    /// draw) pair as in one piece, and the stages are sliced the same whatever the pieces.
    #[test]
    fn pieces_of_any_size_make_the_same_stages_and_slices() {
        use crate::trace::sink_interface::ListedEvents;
        let draws = 2500;
        let mut words = vec![
            Words::of(Payload::StartCmdBuffer(StartCmdBuffer::default())),
            Words::of(Payload::StartRenderPass(StartRenderPass {
                render_pass: 0x10,
                framebuffer: 0xf,
                ..Default::default()
            })),
            Words::of(Payload::BeginLabel(BeginLabel {
                label: LabelRef { offset: 0, len: 1 },
            })),
        ];
        for _ in 0..draws {
            words.push(Words::of(Payload::StartDraw(StartDraw::default())));
            words.push(Words::of(Payload::EndDraw(EndDraw::default())));
        }
        words.push(Words::of(Payload::EndLabel(EndLabel::default())));
        words.push(Words::of(Payload::EndRenderPass(EndRenderPass::default())));
        words.push(Words::of(Payload::EndCmdBuffer(EndCmdBuffer::default())));
        let events: Vec<Event<'_>> = words
            .iter()
            .enumerate()
            .map(|(i, w)| w.event(1000 + 10 * i as u64, b"a", 0xc))
            .collect();
        let whole = slices(&mut ListedEvents::whole(&events), 1000);
        let sizes: Vec<(bool, usize)> = whole.iter().map(|(f, s)| (*f, s.len())).collect();
        assert_eq!(
            sizes,
            [(false, 1000), (true, 1000), (true, draws - 2000 + 3)]
        );
        let last = whole[2].1.iter().rev().take(3).copied().collect::<Vec<_>>();
        let end = 1000 + 10 * (events.len() as u64 - 1);
        assert_eq!(
            last,
            [
                (1000, end, 0, 0),
                (1010, end - 10, 0x10, 0xf),
                (1020, end - 20, 0x10, 0xf)
            ],
            "the command buffer, render pass and label close in the last piece"
        );
        for piece in [1, 7, 1000, 1024] {
            let mut pieces = ListedEvents {
                events: &events,
                piece,
            };
            assert!(slices(&mut pieces, 1000) == whole, "pieces of {piece}");
        }
        // A batch of exactly one slice makes one; a batch without a stage one empty one.
        let one = slices(&mut ListedEvents::whole(&events[..2003]), 1000);
        assert_eq!((one.len(), one[0].1.len()), (1, 1000));
        let open = slices(&mut ListedEvents::whole(&events[..3]), 1000);
        assert_eq!(open, [(false, vec![])]);
    }
}
