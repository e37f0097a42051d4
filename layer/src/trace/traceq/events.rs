//! A completed batch's timestamps (from the layer's readback, or from the queries where
//! they stayed: [`super::query_window`]) turned into events, in execution order: each
//! command buffer's events with the events of the secondaries it executed spliced in where
//! it executed them.

use std::sync::Arc;

use crate::trace::record::recorded_trace::RecordedTrace;
use crate::trace::sink_interface::{Event, EventPieces, PIECE_EVENTS};
use crate::trace::tracepoints::Payload;

/// Where a batch's raw timestamps are found, by index of its readback (each trace's
/// queries in depth-first order, as a copy writes them).
pub trait Timestamps {
    /// The value at `index`; `None` when it cannot be had (its event is left out).
    fn at(&mut self, index: usize) -> Option<u64>;

    /// The pipeline statistics a tracked run of `trace` left after its timestamps (see
    /// `record::recorded_stats::Source::Run`), where this batch's values hold them.
    fn run_statistics(&self, _trace: &RecordedTrace) -> Option<&[u64]> {
        None
    }
}

/// A readback the layer's copy wrote.
impl Timestamps for &[u64] {
    fn at(&mut self, index: usize) -> Option<u64> {
        self.get(index).copied()
    }
}

impl<T: Timestamps> Timestamps for &mut T {
    fn at(&mut self, index: usize) -> Option<u64> {
        (**self).at(index)
    }

    fn run_statistics(&self, trace: &RecordedTrace) -> Option<&[u64]> {
        (**self).run_statistics(trace)
    }
}

/// No values: for going through the events without their times.
struct Untimed;

impl Timestamps for Untimed {
    fn at(&mut self, _: usize) -> Option<u64> {
        Some(0)
    }
}

/// A completed batch's events, made afresh for each sink that reads them and handed over
/// in pieces of at most [`PIECE_EVENTS`]: the thread's memory stays the same whatever the
/// batch. `values` holds the batch's timestamps and `to_ns` turns a raw value into
/// nanoseconds.
pub struct BatchEvents<'a, V, F> {
    traces: &'a [Arc<RecordedTrace>],
    values: V,
    to_ns: F,
    /// The piece being filled, kept from one reading to the next.
    piece: Vec<Event<'a>>,
    count: u64,
    first_last_ns: (u64, u64),
    /// Events left out because their trace is incomplete.
    pub dropped: u64,
    /// Events a reading left out because their value could not be had after all (the
    /// most of any reading; never expected: see [`super::query_window`]).
    pub unread: u64,
}

impl<'a, V: Timestamps, F: Fn(u64) -> u64> BatchEvents<'a, V, F> {
    /// Goes through the events once for what the sinks need first (count, first and last
    /// times) and for the events left out.
    pub fn new(traces: &'a [Arc<RecordedTrace>], mut values: V, to_ns: F) -> Self {
        // Where the first and the last event's values are; only those two are read and
        // converted (in that order, as the conversion unwraps a counter of fewer bits from
        // the value before).
        let (mut count, mut first, mut last) = (0u64, None, 0);
        let dropped = visit(traces, &mut Untimed, &|raw| raw, &mut |_, index| {
            count += 1;
            first.get_or_insert(index);
            last = index;
        });
        let first_last_ns = match first {
            Some(first) => {
                let first = to_ns(values.at(first).unwrap_or(0));
                (first, to_ns(values.at(last).unwrap_or(0)))
            }
            None => (0, 0),
        };
        BatchEvents {
            traces,
            values,
            to_ns,
            piece: Vec::new(),
            count,
            first_last_ns,
            dropped,
            unread: 0,
        }
    }
}

impl<'a, V: Timestamps, F: Fn(u64) -> u64> EventPieces<'a> for BatchEvents<'a, V, F> {
    fn count(&self) -> u64 {
        self.count
    }

    fn first_last_ns(&self) -> (u64, u64) {
        self.first_last_ns
    }

    fn each_piece(&mut self, f: &mut dyn FnMut(&[Event<'a>])) {
        let piece = &mut self.piece;
        piece.clear();
        piece.reserve(PIECE_EVENTS.min(self.count as usize));
        let left_out = visit(self.traces, &mut self.values, &self.to_ns, &mut |e, _| {
            piece.push(e);
            if piece.len() == PIECE_EVENTS {
                f(piece);
                piece.clear();
            }
        });
        if !piece.is_empty() {
            f(piece);
            piece.clear();
        }
        self.unread = self.unread.max(left_out.saturating_sub(self.dropped));
    }
}

/// Calls `f` with the events of `traces` in execution order and the readback index of
/// each one's value; returns how many were left out (their trace is incomplete, or their
/// value could not be had).
fn visit<'a>(
    traces: &'a [Arc<RecordedTrace>],
    values: &mut impl Timestamps,
    to_ns: &impl Fn(u64) -> u64,
    f: &mut impl FnMut(Event<'a>, usize),
) -> u64 {
    let mut next_base = 0usize;
    let mut next_counters = 0u32;
    let mut dropped = 0;
    for trace in traces {
        dropped += trace_events(trace, values, to_ns, &mut next_base, &mut next_counters, f);
    }
    dropped
}

/// The events of `trace` (and its children), in execution order. `next_counters` numbers
/// the ranges with pipeline statistics in that order, as the batch's counters are listed
/// (see `traceq::counters`).
fn trace_events<'a>(
    trace: &'a RecordedTrace,
    values: &mut impl Timestamps,
    to_ns: &impl Fn(u64) -> u64,
    next_base: &mut usize,
    next_counters: &mut u32,
    f: &mut impl FnMut(Event<'a>, usize),
) -> u64 {
    // Readback regions are laid out depth first: this trace's, then each child's in turn.
    let base = *next_base;
    *next_base += trace.slots as usize;
    let mut dropped = 0;
    let mut children = trace.children.iter().peekable();
    let mut counted = trace.counted_events().peekable();
    let mut args = trace.args.as_slice();
    for (i, e) in trace.events.iter().enumerate() {
        while let Some(child) = children.next_if(|c| c.position as usize <= i) {
            dropped += trace_events(&child.trace, values, to_ns, next_base, next_counters, f);
        }
        let counters = counted.next_if_eq(&(i as u32)).map(|_| {
            *next_counters += 1;
            *next_counters - 1
        });
        let id = usize::from(e.id);
        let n = Payload::WORDS.get(id).copied().unwrap_or(0);
        let (words, rest) = args.split_at(n.min(args.len()));
        args = rest;
        if !trace.complete {
            dropped += 1;
            continue;
        }
        let index = base + e.slot as usize;
        let cmd = ash::vk::Handle::as_raw(trace.cmd);
        let event = values
            .at(index)
            .and_then(|raw| Event::new(to_ns(raw), id, words, &trace.strings, cmd));
        match event {
            Some(event) => f(counters.map_or(event, |c| event.with_counters(c)), index),
            // Unread, or (never expected) words that do not decode.
            None => dropped += 1,
        }
    }
    for child in children {
        dropped += trace_events(&child.trace, values, to_ns, next_base, next_counters, f);
    }
    dropped
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::gpu::interface::Backend;
    use crate::trace::health::Health;
    use crate::trace::record::chunk::{ChunkPool, RecordedEvent};
    use crate::trace::record::recorded_trace::{Child, TraceParts};
    use crate::trace::tracepoints::{
        EndCmdBuffer, EndDraw, EndRenderPass, StartCmdBuffer, StartDraw, StartRenderPass,
    };

    fn pool() -> Arc<ChunkPool> {
        Arc::new(ChunkPool::new(Backend::inert(), Arc::new(Health::new(0))))
    }

    /// A command buffer of `draws` draws in a render pass, each event in a query of its
    /// own, with `children` executed after the pass.
    fn trace(pool: &Arc<ChunkPool>, draws: u32, children: Vec<Child>) -> Arc<RecordedTrace> {
        Arc::new(RecordedTrace::new(parts(draws, children), Arc::clone(pool)))
    }

    /// The parts of [`trace`]'s command buffer (`2 draws + 4` events and queries).
    pub fn parts(draws: u32, children: Vec<Child>) -> TraceParts {
        let mut parts = TraceParts {
            complete: true,
            children,
            ..Default::default()
        };
        let mut push = |p: Payload| {
            let (words, len) = p.encode();
            parts.events.push(RecordedEvent {
                id: p.id() as u16,
                slot: parts.slots,
            });
            parts.args.extend_from_slice(&words[..len]);
            parts.slots += 1;
        };
        push(Payload::StartCmdBuffer(StartCmdBuffer::default()));
        push(Payload::StartRenderPass(StartRenderPass::default()));
        for _ in 0..draws {
            push(Payload::StartDraw(StartDraw::default()));
            push(Payload::EndDraw(EndDraw {}));
        }
        push(Payload::EndRenderPass(EndRenderPass::default()));
        push(Payload::EndCmdBuffer(EndCmdBuffer::default()));
        parts
    }

    /// The readback of `queries` timestamps: query `i` ran at `1000 + 10 i` ns.
    fn values(queries: usize) -> Vec<u64> {
        (0..queries as u64).map(|i| 1000 + 10 * i).collect()
    }

    /// The pieces, joined, are the batch in execution order (a secondary spliced where it
    /// ran, an incomplete trace left out and counted), each at most a piece long.
    #[test]
    fn pieces_are_the_batch_in_order() {
        let pool = pool();
        let child = trace(&pool, 700, Vec::new());
        let primary = trace(
            &pool,
            600,
            vec![Child {
                position: 1,
                trace: Arc::clone(&child),
            }],
        );
        let mut incomplete = TraceParts::default();
        incomplete.events.push(RecordedEvent { id: 0, slot: 0 });
        incomplete.slots = 1;
        let traces = [
            primary,
            Arc::new(RecordedTrace::new(incomplete, pool.clone())),
        ];
        let values = values(1204 + 1404 + 1);
        let mut events = BatchEvents::new(&traces, &values[..], |raw| raw * 2);
        assert_eq!((events.count(), events.dropped), (1204 + 1404, 1));
        // Primary region first (its first event, then the child's region spliced in).
        let expected: Vec<u64> = std::iter::once(0)
            .chain(1204..1204 + 1404)
            .chain(1..1204)
            .map(|q| (1000 + 10 * q) * 2)
            .collect();
        assert_eq!(
            events.first_last_ns(),
            (expected[0], *expected.last().unwrap())
        );
        for _ in 0..2 {
            let mut got = Vec::new();
            let mut sizes = Vec::new();
            events.each_piece(&mut |piece| {
                sizes.push(piece.len());
                got.extend(piece.iter().map(|e| e.ns));
            });
            assert_eq!(got, expected, "each reading makes the same events");
            assert_eq!(sizes, [PIECE_EVENTS, PIECE_EVENTS, 2608 - 2 * PIECE_EVENTS]);
        }
    }

    /// The bytes the thread holds at most while a batch of `draws` draws is read twice (two
    /// sinks), beyond what it held before.
    fn peak_reading(draws: u32) -> i64 {
        let pool = pool();
        let traces = [trace(&pool, draws, Vec::new())];
        let values = values(2 * draws as usize + 4);
        let before = crate::alloc_count::reset_peak();
        let mut events = BatchEvents::new(&traces, &values[..], |raw| raw);
        let mut sum = 0u64;
        for _ in 0..2 {
            events.each_piece(&mut |piece| sum += piece.iter().map(|e| e.ns).sum::<u64>());
        }
        assert_eq!(sum, 2 * values.iter().sum::<u64>());
        crate::alloc_count::peak() - before
    }

    /// A batch is never listed whole: a million events take no more memory than a few
    /// thousand (56 bytes an event: 56 MB listed whole).
    #[test]
    fn reading_a_batch_holds_one_piece_whatever_its_size() {
        let piece = (PIECE_EVENTS * std::mem::size_of::<Event<'_>>()) as i64;
        let small = peak_reading(2_000);
        let large = peak_reading(500_000);
        assert!(small <= piece, "{small} bytes for 4,004 events");
        assert_eq!(large, small, "{large} bytes for 1,000,004 events");
    }
}
