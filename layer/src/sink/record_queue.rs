//! The records an [`super::output::Output`] holds for its writer, and what the output and
//! its writer share: the queue, the losses per device, the signals between them.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use parking_lot::{Condvar, Mutex};

use super::TraceSummary;

/// Spare record buffers kept for reuse (formatting allocates nothing in the steady state).
const SPARE_BUFFERS: usize = 8;
/// How a device's end record is written, given its summary with the output's losses
/// folded in.
pub type RenderEnd = fn(&TraceSummary, &mut String);

pub(super) enum Record {
    /// One batch: counted as lost (its events as dropped) if it cannot be written.
    Batch {
        device: u32,
        events: u64,
        text: String,
    },
    /// A piece of a batch being streamed: the batch's last piece is its `Batch` record
    /// (or `Torn`). Parts are only written to regular files, which a failed batch can be
    /// truncated back on.
    Part(String),
    /// A batch whose parts were queued but whose rest could not be: the writer truncates
    /// the file back to before it and counts it as lost.
    Torn { device: u32, events: u64 },
    /// A frame end or another line that carries no events.
    Text(String),
    /// The end of a device's trace, rendered by the writer with the losses it knows of.
    End {
        device: u32,
        summary: TraceSummary,
        render: RenderEnd,
    },
    /// A batch is being formatted into a file not opened yet: open it now, so that the
    /// batch can be streamed if it is a regular file.
    Open,
}

/// What an output could not write, per device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Losses {
    pub batches: u64,
    pub events: u64,
}

impl Losses {
    /// `summary` with these losses folded in: lost batches are not in the trace, and their
    /// events count as dropped.
    pub fn apply(&self, summary: &TraceSummary) -> TraceSummary {
        TraceSummary {
            batches: summary.batches.saturating_sub(self.batches),
            events: summary.events.saturating_sub(self.events),
            dropped: summary.dropped + self.events,
            ..summary.clone()
        }
    }
}

pub(super) struct State {
    pub records: VecDeque<Record>,
    /// Bytes of text in `records`.
    pub bytes: usize,
    /// Whether the writer is writing a record it took (the output is idle when not, and
    /// `records` is empty).
    pub writing: bool,
    pub spare: Vec<String>,
    pub losses: HashMap<u32, Losses>,
    /// Set when a record could not get room in time; cleared when the writer takes one.
    pub stalled: bool,
    /// The destination is gone (a closed pipe) or could not be written at all: records are
    /// counted as lost as they come.
    pub closed: bool,
    /// A batch is being streamed: more of it is coming.
    pub streaming: bool,
    /// No [`super::output::Output`] is left to queue records (a capture ended): the writer
    /// ends once the queue is empty, and its file is closed.
    pub unowned: bool,
}

pub(super) struct Shared {
    /// "stdout" or the path asked for, for messages until the output is open.
    pub name: String,
    /// Where the trace goes, once the output is open: the path asked for, a pid-named one
    /// beside it (another process holds the path) or "stdout" (it cannot be opened).
    pub opened: OnceLock<String>,
    /// "Nothing was traced to it" was said at exit.
    pub untouched_said: AtomicBool,
    /// Batches said to be lost as unwritten at a drain (the most said).
    pub left_said: AtomicUsize,
    pub state: Mutex<State>,
    /// Signalled when a record is queued (the writer waits on it).
    pub queued: Condvar,
    /// Signalled when the writer took or finished a record (producers and drains wait).
    pub progressed: Condvar,
    /// A format's header (csv): the writer puts it before the first record it writes, as
    /// part of that record (so a file that takes nothing never holds a header alone, and a
    /// file that takes anything starts with it).
    pub header: OnceLock<&'static str>,
    /// Batches are streamed in parts (a regular file, once it is open).
    pub streams: AtomicBool,
    /// Held while a record goes in, and across a streamed batch, so that the records of
    /// the devices sharing the output never land between a batch's parts.
    pub gate: Mutex<()>,
    /// The [`super::output::Output`] handles alive.
    pub handles: AtomicUsize,
}

impl Shared {
    pub fn new(name: String, streams: bool) -> Shared {
        Shared {
            name,
            opened: OnceLock::new(),
            untouched_said: AtomicBool::new(false),
            left_said: AtomicUsize::new(0),
            state: Mutex::new(State {
                records: VecDeque::new(),
                bytes: 0,
                writing: false,
                spare: Vec::new(),
                losses: HashMap::new(),
                stalled: false,
                closed: false,
                streaming: false,
                unowned: false,
            }),
            queued: Condvar::new(),
            progressed: Condvar::new(),
            header: OnceLock::new(),
            streams: AtomicBool::new(streams),
            gate: Mutex::new(()),
            handles: AtomicUsize::new(0),
        }
    }
}

impl Shared {
    /// Where the trace goes (the path asked for while the output is not open yet).
    pub fn name(&self) -> &str {
        self.opened.get().unwrap_or(&self.name)
    }

    /// A file never opened because no batch came, not said yet (at exit, once).
    pub fn untouched_unsaid(&self) -> bool {
        self.opened.get().is_none() && !self.untouched_said.swap(true, Ordering::Relaxed)
    }

    /// Whether `left` batches still unwritten are more than were said lost before: the
    /// drains at the instance's end and at exit then say a loss once.
    pub fn loss_unsaid(&self, left: usize) -> bool {
        self.left_said.fetch_max(left, Ordering::Relaxed) < left
    }
}

impl State {
    /// Counts `record` as lost and keeps its buffer for reuse.
    pub fn lose(&mut self, record: Record) {
        match record {
            Record::Batch {
                device,
                events,
                text,
            } => {
                let losses = self.losses.entry(device).or_default();
                losses.batches += 1;
                losses.events += events;
                self.recycle(text);
            }
            Record::Torn { device, events } => {
                let losses = self.losses.entry(device).or_default();
                losses.batches += 1;
                losses.events += events;
            }
            Record::Part(text) | Record::Text(text) => self.recycle(text),
            Record::End { .. } | Record::Open => {}
        }
    }

    pub fn recycle(&mut self, mut text: String) {
        if self.spare.len() < SPARE_BUFFERS {
            text.clear();
            self.spare.push(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary() -> TraceSummary {
        TraceSummary {
            device: 3,
            batches: 10,
            events: 60,
            dropped: 2,
        }
    }

    #[test]
    fn losses_move_batches_and_events_to_dropped() {
        let losses = Losses {
            batches: 2,
            events: 12,
        };
        let s = losses.apply(&summary());
        assert_eq!(
            (s.device, s.batches, s.events, s.dropped),
            (3, 8, 48, 14),
            "{s:?}"
        );
        assert_eq!(
            Losses::default().apply(&summary()).dropped,
            2,
            "nothing lost, nothing changed"
        );
    }
}
