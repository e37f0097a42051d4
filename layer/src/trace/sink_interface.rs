//! What the core hands its outputs and what it asks of them (u_trace's printer callbacks).
//! Defined here, implemented by the formats ([`crate::sink`]) and given to the core when a
//! device is created ([`Outputs`]), so that the core never names a format.

use crate::trace::tracepoints::{Payload, TracepointInfo, TRACEPOINTS};

pub use super::object_names::{ObjectName, ObjectNames};
use super::pipeline_names::PipelineNames;
pub use super::record::counter_values::{CounterValue, HardwareSet};
pub use super::record::statistics::Counters;
pub use super::submit::batch::SubmitTiming;

/// One timestamped tracepoint. Its arguments stay in the words its trace recorded them in
/// (see [`Payload::encode`]) until an output asks for them: a batch's list of events then
/// takes 56 bytes per event, not a whole payload's room.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    /// Absolute GPU time in nanoseconds.
    pub ns: u64,
    /// The tracepoint: its index in [`TRACEPOINTS`].
    id: u16,
    /// Its pipeline statistics: an index into the batch's [`BatchInfo::counters`], or
    /// [`Self::NO_COUNTERS`] (in the room `id` leaves before the next field: the event
    /// stays 56 bytes).
    counters: u32,
    /// Its arguments' words.
    words: &'a [u32],
    /// The labels of the command trace the event belongs to (see `LabelRef`).
    pub strings: &'a [u8],
    /// The command buffer it was recorded in (a secondary's own handle).
    pub cmd: u64,
}

impl<'a> Event<'a> {
    /// The event of tracepoint `id` with the arguments `words`; `None` when they are not a
    /// payload of that tracepoint (so that [`Self::payload`] always has one to give).
    pub fn new(ns: u64, id: usize, words: &'a [u32], strings: &'a [u8], cmd: u64) -> Option<Self> {
        // What `Payload::decode` needs: a tracepoint of that id, and its words (any value
        // of them decodes). Checked by length, so that an event is decoded once, when read.
        if Payload::WORDS.get(id) != Some(&words.len()) {
            return None;
        }
        Some(Event {
            ns,
            id: id as u16,
            counters: Self::NO_COUNTERS,
            words,
            strings,
            cmd,
        })
    }

    /// An event without pipeline statistics.
    pub const NO_COUNTERS: u32 = u32::MAX;

    /// The event with the batch's counters at `index` (see [`BatchInfo::counters`]).
    pub fn with_counters(mut self, index: u32) -> Self {
        self.counters = index;
        self
    }

    /// Its pipeline statistics, read from the batch's table.
    pub fn counters<'b>(&self, batch: &BatchInfo<'b>) -> Option<&'b Counters> {
        batch.counters.get(self.counters as usize)?.as_ref()
    }

    pub fn info(&self) -> &'static TracepointInfo {
        &TRACEPOINTS[usize::from(self.id)]
    }

    /// The arguments, decoded from their words.
    pub fn payload(&self) -> Payload {
        // Checked in `new`: the words decode.
        Payload::decode(usize::from(self.id), self.words)
            .unwrap_or_else(|| unreachable!("an event's words were checked when it was made"))
    }
}

/// Events of one batch in a piece, at most: what a sink is handed at a time. A batch of any
/// size is never listed whole (56 bytes an event: 112 MB for a million draws, whose first
/// touch cost traceq more than formatting them); a piece's list stays in the caches.
pub const PIECE_EVENTS: usize = 1024;

/// A batch's events, handed to a sink in pieces of at most [`PIECE_EVENTS`], in submission
/// order. Each call of [`Self::each_piece`] goes through all of them again (every sink of a
/// device reads the same events); what a sink needs before the first (the count, the first
/// and last times) is known beforehand.
pub trait EventPieces<'a> {
    /// How many events the batch has (more than 0).
    fn count(&self) -> u64;
    /// The times of the first and the last event.
    fn first_last_ns(&self) -> (u64, u64);
    /// Calls `f` with each piece of the events, in order.
    fn each_piece(&mut self, f: &mut dyn FnMut(&[Event<'a>]));
}

/// Events already listed, handed out in pieces of `piece` (a sink's tests; `piece` shows
/// that pieces of any size make the same output as one).
#[cfg(test)]
pub struct ListedEvents<'l, 'a> {
    pub events: &'l [Event<'a>],
    pub piece: usize,
}

#[cfg(test)]
impl<'l, 'a> ListedEvents<'l, 'a> {
    /// `events` as one piece.
    pub fn whole(events: &'l [Event<'a>]) -> ListedEvents<'l, 'a> {
        ListedEvents {
            events,
            piece: events.len().max(1),
        }
    }
}

#[cfg(test)]
impl<'a> EventPieces<'a> for ListedEvents<'_, 'a> {
    fn count(&self) -> u64 {
        self.events.len() as u64
    }

    fn first_last_ns(&self) -> (u64, u64) {
        match (self.events.first(), self.events.last()) {
            (Some(first), Some(last)) => (first.ns, last.ns),
            _ => (0, 0),
        }
    }

    fn each_piece(&mut self, f: &mut dyn FnMut(&[Event<'a>])) {
        for piece in self.events.chunks(self.piece.max(1)) {
            f(piece);
        }
    }
}

/// A payload's words, owned: for events made by hand (the formats' tests).
#[cfg(test)]
pub struct Words {
    id: usize,
    words: [u32; Payload::MAX_WORDS],
    len: usize,
}

#[cfg(test)]
impl Words {
    pub fn of(payload: Payload) -> Words {
        let (words, len) = payload.encode();
        Words {
            id: payload.id(),
            words,
            len,
        }
    }

    pub fn event<'a>(&'a self, ns: u64, strings: &'a [u8], cmd: u64) -> Event<'a> {
        Event::new(ns, self.id, &self.words[..self.len], strings, cmd).expect("encoded words")
    }
}

/// What the header of a batch shows.
#[derive(Clone, Debug, Default)]
pub struct BatchInfo<'a> {
    /// The device's traced batches, counted from 1.
    pub number: u64,
    pub device: u32,
    pub queue: u64,
    /// The queue's family and its index in it.
    pub queue_family: u32,
    pub queue_index: u32,
    pub frame: u32,
    pub submission: u64,
    pub cmdbufs: u32,
    /// Timestamp queries the batch wrote (secondaries' included).
    pub queries: u32,
    /// Every command buffer the call submitted, in submission order.
    pub command_buffers: &'a [u64],
    /// The `vkQueueSubmit*` call on the CPU (its thread: the batch's submitting thread).
    pub submit: SubmitTiming,
    /// When that call began, on the device's clock (the events' nanoseconds): set by
    /// [`crate::sink::submit_clock`] for the text formats; `None` where the clock could not
    /// be paired with the CPU's.
    pub submitted_ns: Option<u64>,
    /// The names of the pipelines its draws and dispatches name.
    pub pipeline_names: Option<&'a PipelineNames>,
    /// The pipeline statistics of its ranges that have them (`GPU_TRACE_COUNTERS`), which
    /// events name by index; `None` where they could not be read.
    pub counters: &'a [Option<Counters>],
}

impl BatchInfo<'_> {
    /// The name the application gave pipeline `handle`, if any.
    pub fn pipeline_name(&self, handle: u64) -> Option<&str> {
        self.pipeline_names?.get(handle)
    }
}

/// Closing counts of a device's trace.
#[derive(Clone, Debug)]
pub struct TraceSummary {
    pub device: u32,
    pub batches: u64,
    pub events: u64,
    pub dropped: u64,
}

pub trait Sink: Send {
    /// A completed batch of at least one event, its events in submission order, in pieces.
    fn batch(&mut self, info: &BatchInfo, events: &mut dyn EventPieces<'_>);
    /// `vkQueuePresentKHR` ended `frame`.
    fn end_of_frame(&mut self, device: u32, frame: u32);
    /// The device is going (or the process is exiting).
    fn end_of_trace(&mut self, summary: &TraceSummary);
    /// Waits, at most `timeout`, until what this sink queued is written; returns how many
    /// batches are still unwritten. Sinks that write synchronously have nothing to wait for.
    fn drain(&mut self, _timeout: std::time::Duration) -> usize {
        0
    }
}

/// What a sink may need of its device beyond the events.
pub struct DeviceContext {
    pub index: u32,
    pub handle: u64,
    /// Pairs the device's timestamps with the CPU's clocks (Perfetto's clock snapshots).
    pub clock: Option<crate::gpu::interface::GpuClock>,
    pub names: ObjectNames,
}

/// A device's outputs, as the core is given them.
pub struct Outputs {
    /// Opens the device's sink once its context (clock, names) is known; the sink then
    /// belongs to the device's traceq thread.
    pub open: Box<dyn FnOnce(DeviceContext) -> Box<dyn Sink> + Send>,
    /// Told of the device's life and of the `GPU_TRACE_FRAMES` window (a Perfetto file's
    /// session follows them); `None` when no output cares.
    pub lifecycle: Option<Box<dyn Lifecycle>>,
}

/// What an output that spans the process (a Perfetto session) needs to know of a device.
pub trait Lifecycle: Send + Sync {
    /// The device was created and feeds the output.
    fn device_created(&self);
    /// A frame opened the `GPU_TRACE_FRAMES` window.
    fn window_opened(&self);
    /// A frame closed it.
    fn window_closed(&self);
    /// The device is going and its traceq thread wrote everything it had.
    fn device_gone(&self);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event is made only of its tracepoint's words: too few, too many or an unknown
    /// tracepoint give none (so that `payload` always decodes).
    #[test]
    fn events_are_made_of_whole_payloads() {
        for (id, tp) in TRACEPOINTS.iter().enumerate() {
            let n = Payload::WORDS[id];
            let words = vec![1u32; n + 1];
            let event = Event::new(5, id, &words[..n], &[], 0).expect(tp.name);
            assert_eq!(event.payload().id(), id, "{}", tp.name);
            assert!(Event::new(5, id, &words, &[], 0).is_none(), "{}", tp.name);
            if n > 0 {
                assert!(Event::new(5, id, &words[..n - 1], &[], 0).is_none());
            }
        }
        assert!(Event::new(5, TRACEPOINTS.len(), &[], &[], 0).is_none());
    }
}

#[cfg(test)]
mod size_tests {
    #[test]
    fn an_event_stays_56_bytes() {
        assert_eq!(std::mem::size_of::<super::Event<'_>>(), 56);
    }
}
