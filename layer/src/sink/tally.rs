//! The sink of a watch (`utrace top`, through `crate::control`): instead of writing the
//! events, it sums them into a [`Tally`] shared by every device's sink: frames ended, each
//! frame's GPU time, per range kind the total time and count, and with
//! `GPU_TRACE_COUNTERS=pipeline` the pipeline statistics (the command buffers' sums). The control side takes
//! the tally once a second and sends it as one line. Runs on the traceq threads, per batch;
//! its memory is bounded (see the constants).

use std::sync::Arc;

use parking_lot::Mutex;

use super::{BatchInfo, Counters, EventPieces, Sink, TraceSummary};
use crate::trace::tracepoints::RangeKind;

/// The pipeline statistics a second sums.
const STATISTICS: usize = Counters::NAMES.len();

/// Frame times kept per second: enough for a 1000 fps application; past it, frames are
/// still counted, their times not.
pub const MAX_FRAME_TIMES: usize = 1024;
/// Frames whose batches are summed while their end has not come yet, per device.
const FRAMES_IN_FLIGHT: usize = 8;
/// Batch spans kept per frame for its GPU time; later ones are added whole.
const SPANS_PER_FRAME: usize = 256;

/// What a second of watching found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Second {
    /// Frames ended (each frame once, whichever devices presented it).
    pub frames: u32,
    /// The GPU time of the frames ended (at most [`MAX_FRAME_TIMES`]), in order.
    pub frame_ns: Vec<u64>,
    pub batches: u64,
    /// Per range kind: (the range's name in the spec, total ns, count), in first-seen order.
    pub ranges: Vec<(&'static str, u64, u64)>,
    /// The pipeline statistics of the command buffers counted (each one's sum of its
    /// ranges), in the order of `Counters::NAMES`, each `None` where no command buffer
    /// showed it; `None` when none was counted.
    pub counters: Option<[Option<u64>; STATISTICS]>,
}

impl Second {
    fn add_range(&mut self, range: &'static str, ns: u64) {
        match self.ranges.iter_mut().find(|r| r.0 == range) {
            Some(r) => {
                r.1 += ns;
                r.2 += 1;
            }
            None => self.ranges.push((range, ns, 1)),
        }
    }
}

/// Shared by every device's [`WatchSink`] and the watching connection.
#[derive(Default)]
pub struct Tally {
    inner: Mutex<(Second, Option<u32>)>,
}

impl Tally {
    /// What was summed since the last call (the frame counting goes on).
    pub fn take(&self) -> Second {
        std::mem::take(&mut self.inner.lock().0)
    }
}

/// A device's sink during a watch.
pub struct WatchSink {
    tally: Arc<Tally>,
    /// The frames not ended yet: their batches' GPU spans.
    frames: Vec<(u32, Vec<(u64, u64)>)>,
    /// The ranges open while a batch is read (kept to reuse its room).
    open: Vec<(&'static str, u64)>,
}

impl WatchSink {
    pub fn new(tally: Arc<Tally>) -> WatchSink {
        WatchSink {
            tally,
            frames: Vec::new(),
            open: Vec::new(),
        }
    }

    fn spans_of(&mut self, frame: u32) -> &mut Vec<(u64, u64)> {
        let at = match self.frames.iter().position(|f| f.0 == frame) {
            Some(at) => at,
            None => {
                if self.frames.len() >= FRAMES_IN_FLIGHT {
                    // A frame that never ended (no present): forgotten.
                    self.frames.remove(0);
                }
                self.frames.push((frame, Vec::new()));
                self.frames.len() - 1
            }
        };
        &mut self.frames[at].1
    }
}

impl Sink for WatchSink {
    fn batch(&mut self, info: &BatchInfo, events: &mut dyn EventPieces<'_>) {
        if events.count() == 0 {
            return;
        }
        // Begins paired with ends as the formats nest them (`super::ranges`).
        self.open.clear();
        let (mut first, mut last) = (u64::MAX, 0);
        let open = &mut self.open;
        let mut tally = self.tally.inner.lock();
        tally.0.batches += 1;
        events.each_piece(&mut |piece| {
            for e in piece {
                (first, last) = (first.min(e.ns), last.max(e.ns));
                if let Some(c) = e.counters(info).filter(|c| c.is_sum() && c.measured) {
                    let sums = tally.0.counters.get_or_insert([None; STATISTICS]);
                    for (name, value) in c.shown() {
                        let at = Counters::NAMES.iter().position(|n| *n == name);
                        if let (Some(at), Some(value)) = (at, value.count()) {
                            sums[at] = Some(sums[at].unwrap_or(0) + value);
                        }
                    }
                }
                let info = e.info();
                match info.kind {
                    RangeKind::Begin => open.push((info.range, e.ns)),
                    RangeKind::End => {
                        if let Some(at) = open.iter().rposition(|o| o.0 == info.range) {
                            let begin = open[at].1;
                            open.truncate(at);
                            tally.0.add_range(info.range, e.ns.saturating_sub(begin));
                        }
                    }
                    RangeKind::Marker => {}
                }
            }
        });
        drop(tally);
        let spans = self.spans_of(info.frame);
        let full = spans.len() >= SPANS_PER_FRAME;
        match spans.last_mut() {
            Some(l) if full => *l = (l.0.min(first), l.1.max(last)),
            _ => spans.push((first, last)),
        }
    }

    fn end_of_frame(&mut self, _device: u32, frame: u32) {
        let spans = match self.frames.iter().position(|f| f.0 == frame) {
            Some(at) => self.frames.remove(at).1,
            None => Vec::new(),
        };
        // Frames before it that never ended are forgotten too.
        self.frames.retain(|f| f.0 > frame);
        let mut tally = self.tally.inner.lock();
        let (second, last) = &mut *tally;
        if last.is_none_or(|l| frame > l) {
            *last = Some(frame);
            second.frames += 1;
        }
        if !spans.is_empty() && second.frame_ns.len() < MAX_FRAME_TIMES {
            second.frame_ns.push(covered(spans));
        }
    }

    fn end_of_trace(&mut self, _summary: &TraceSummary) {}
}

/// The time covered by at least one of `spans`, overlaps counted once (batches of several
/// queues run at once): a frame's GPU time as `utrace report` counts it.
fn covered(mut spans: Vec<(u64, u64)>) -> u64 {
    spans.sort_unstable();
    let mut total = 0;
    let mut current: Option<(u64, u64)> = None;
    for (b, e) in spans {
        current = match current {
            Some((cb, ce)) if b <= ce => Some((cb, ce.max(e))),
            Some((cb, ce)) => {
                total += ce - cb;
                Some((b, e))
            }
            None => Some((b, e)),
        };
    }
    total + current.map_or(0, |(b, e)| e - b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::sink_interface::{ListedEvents, Words};
    use crate::trace::tracepoints::Payload;

    /// A command buffer's start and end events' words.
    fn cmd_buffer_words() -> (Words, Words) {
        use crate::trace::tracepoints::{EndCmdBuffer, StartCmdBuffer};
        use ash::vk;
        let start = Words::of(Payload::StartCmdBuffer(StartCmdBuffer {
            cmd: 1,
            level: vk::CommandBufferLevel::PRIMARY,
            usage: vk::CommandBufferUsageFlags::empty(),
            thread: 1,
        }));
        (
            start,
            Words::of(Payload::EndCmdBuffer(EndCmdBuffer { cmd: 1 })),
        )
    }

    #[test]
    fn a_second_sums_the_command_buffers_counters_only() {
        use crate::trace::record::counter_values::Shown;
        let (start, end) = cmd_buffer_words();
        let counted = |shown, values| {
            Some(Counters {
                shown,
                values,
                partial: false,
                measured: true,
                mesh: false,
                hardware: None,
            })
        };
        // The command buffer's sum, and a range inside it (its values in the sum already).
        let counters = [
            counted(Shown::All, [24, 8, 24, 8, 8, 100, 960, 0, 0]),
            counted(Shown::Compute, [0, 0, 0, 0, 0, 0, 960, 0, 0]),
        ];
        let info = BatchInfo {
            counters: &counters,
            ..Default::default()
        };
        let events = [
            start.event(0, &[], 1).with_counters(1),
            end.event(10, &[], 1).with_counters(0),
        ];
        let tally = Arc::new(Tally::default());
        let mut sink = WatchSink::new(Arc::clone(&tally));
        sink.batch(&info, &mut ListedEvents::whole(&events));
        sink.batch(&info, &mut ListedEvents::whole(&events));
        let shown = [48, 16, 48, 16, 16, 200, 1920].map(Some);
        let mut want = [None; STATISTICS];
        want[..7].copy_from_slice(&shown);
        assert_eq!(
            tally.take().counters,
            Some(want),
            "no mesh statistics shown"
        );
        assert_eq!(tally.take().counters, None, "none counted since");
    }

    #[test]
    fn overlapping_batches_count_once() {
        assert_eq!(covered(vec![(10, 20), (15, 30), (40, 45)]), 25);
        assert_eq!(covered(Vec::new()), 0);
    }

    #[test]
    fn a_frame_and_its_ranges_are_summed() {
        let (start, end) = cmd_buffer_words();
        let tally = Arc::new(Tally::default());
        let mut sink = WatchSink::new(Arc::clone(&tally));
        let batch = |sink: &mut WatchSink, frame: u32, from: u64, to: u64| {
            let info = BatchInfo {
                frame,
                ..Default::default()
            };
            let events = [start.event(from, &[], 1), end.event(to, &[], 1)];
            sink.batch(&info, &mut ListedEvents::whole(&events));
        };
        // Frame 2: two queues overlapping (1000..3000 covered), then frame 3 begun.
        batch(&mut sink, 2, 1000, 2000);
        batch(&mut sink, 2, 1500, 3000);
        batch(&mut sink, 3, 5000, 5400);
        sink.end_of_frame(0, 2);
        // Another device ending the same frame counts it once.
        let mut other = WatchSink::new(Arc::clone(&tally));
        other.end_of_frame(1, 2);
        let second = tally.take();
        assert_eq!(second.frames, 1);
        assert_eq!(second.frame_ns, [2000]);
        assert_eq!(second.batches, 3);
        assert_eq!(second.ranges, [("cmd_buffer", 1000 + 1500 + 400, 3)]);
        sink.end_of_frame(0, 3);
        let second = tally.take();
        assert_eq!(
            (second.frames, second.frame_ns, second.batches),
            (1, vec![400], 0)
        );
    }
}
