//! One destination of a text trace, as the sinks see it: a queue of whole records that
//! a writer thread of its own ([`super::writer`]) empties. Each destination is one
//! [`Output`] per process, whatever the number of devices writing to it
//! ([`super::destinations`]). Sinks format whole records
//! (a batch, a frame end, the end of a device's trace) on their traceq thread and queue
//! them here; the writer writes each record whole or not at all. So the traceq threads, and
//! through them the application, never wait for I/O: a pipe whose reader lags, a slow or
//! full disk, a reader that went away.
//!
//! What cannot be written is counted per device and shown in that device's end record
//! (its batches move from `batches`/`events` to `dropped`), which the writer renders when
//! it writes it. The queue holds [`QUEUE_BYTES`]; a record that finds it full waits at most
//! [`STALL`] for room, after which the output counts as stalled and records are dropped
//! (and counted) until it takes data again.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::record_queue::{Losses, Record, RenderEnd, Shared, State};
use super::TraceSummary;

/// Bytes of formatted records an output holds before records wait, then are dropped.
pub const QUEUE_BYTES: usize = 64 << 20;
/// How long a record waits for room before the output counts as stalled.
pub const STALL: Duration = Duration::from_secs(2);
/// A batch written to a regular file is handed to the writer in parts of about this size
/// as it is formatted ([`super::batch_stream`]): memory stays bounded whatever the batch,
/// and formatting and writing overlap.
pub const PART_BYTES: usize = 1 << 20;
/// Text of a streamed batch queued ahead of the writer, at most, while the writer takes
/// data: formatting waits for it beyond this, so that a batch that formats faster than its
/// file takes it (json) holds a few parts at a time, not the whole queue's worth.
pub const STREAM_AHEAD_BYTES: usize = 8 << 20;

/// One destination of the process, shared by the devices writing to it. When the last
/// handle goes (a capture's sinks, once it ended), the writer writes what is queued and
/// ends, closing its file.
pub struct Output {
    shared: Arc<Shared>,
}

impl Clone for Output {
    fn clone(&self) -> Output {
        self.shared.handles.fetch_add(1, Ordering::Relaxed);
        Output {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        // AcqRel: the last handle's drop sees every other handle's records queued.
        if self.shared.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.state.lock().unowned = true;
            self.shared.queued.notify_all();
        }
    }
}

impl Output {
    /// The first handle of `shared`, whose writer is started.
    pub(super) fn from_shared(shared: Arc<Shared>) -> Output {
        shared.handles.fetch_add(1, Ordering::Relaxed);
        Output { shared }
    }

    /// `streams`: batches go to the writer in parts (a regular file).
    pub(super) fn new_shared(name: String, streams: bool) -> Arc<Shared> {
        Arc::new(Shared::new(name, streams))
    }

    pub(super) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Sets the output's header (the devices sharing a csv file have one between them).
    pub fn set_header(&self, header: &'static str) {
        let _ = self.shared.header.set(header);
    }

    /// An empty buffer to format a record into (a recycled one when there is one).
    pub fn buffer(&self) -> String {
        self.shared.state.lock().spare.pop().unwrap_or_default()
    }

    /// Queues a record that carries no events (a frame end).
    pub fn text(&self, text: String) {
        self.push(Record::Text(text));
    }

    /// Queues the end of device `device`'s trace; `render` writes it once the output's
    /// losses for the device are known. Never dropped for lack of room (it is one line).
    pub fn end(&self, device: u32, summary: TraceSummary, render: RenderEnd) {
        let _gate = self.shared.gate.lock();
        let mut state = self.shared.state.lock();
        if state.closed {
            return;
        }
        state.records.push_back(Record::End {
            device,
            summary,
            render,
        });
        self.shared.queued.notify_one();
    }

    fn push(&self, record: Record) {
        let _gate = self.shared.gate.lock();
        if let Err(record) = self.try_push(record) {
            self.shared.state.lock().lose(record);
        }
    }

    /// Queues `record` unless the output is closed or stalled (then it comes back); the
    /// caller holds the gate.
    pub(super) fn try_push(&self, record: Record) -> Result<(), Record> {
        let len = match &record {
            Record::Batch { text, .. } | Record::Part(text) | Record::Text(text) => text.len(),
            Record::Torn { .. } | Record::End { .. } | Record::Open => 0,
        };
        let mut state = self.shared.state.lock();
        if state.closed {
            return Err(record);
        }
        // A record larger than the whole queue still goes in when the queue is empty.
        let fits = |s: &State| s.bytes == 0 || s.bytes + len <= QUEUE_BYTES;
        if !fits(&state) && !state.stalled {
            self.wait_for_writer(&mut state, Instant::now() + STALL, |s| fits(s) || s.closed);
            if !fits(&state) && !state.closed {
                state.stalled = true;
                log::warn!(
                    "the trace output {} took nothing for {STALL:?}; batches are dropped and counted until it takes data again",
                    self.shared.name()
                );
            }
        }
        if state.closed || !fits(&state) {
            return Err(record);
        }
        state.bytes += len;
        state.records.push_back(record);
        self.shared.queued.notify_one();
        Ok(())
    }

    /// Queues a record that carries no text whatever room there is (a torn batch's end);
    /// the caller holds the gate.
    pub(super) fn push_forced(&self, record: Record) {
        let mut state = self.shared.state.lock();
        if state.closed {
            state.lose(record);
            return;
        }
        state.records.push_back(record);
        self.shared.queued.notify_one();
    }

    /// Has the writer open a file output not opened yet, and waits (at most [`STALL`]) until
    /// it did: whether batches are streamed to it is known then. The caller holds the gate.
    pub(super) fn open_now(&self) {
        if self.shared.opened.get().is_some() {
            return;
        }
        self.push_forced(Record::Open);
        let mut state = self.shared.state.lock();
        let shared = &self.shared;
        self.wait_for_writer(&mut state, Instant::now() + STALL, |s| {
            s.closed || shared.opened.get().is_some()
        });
    }

    /// Waits (at most [`STALL`]) until a part of `len` bytes fits in [`STREAM_AHEAD_BYTES`];
    /// false if it still does not (the writer is slow: the part goes as any record does).
    pub(super) fn wait_to_stream(&self, len: usize) -> bool {
        let mut state = self.shared.state.lock();
        let near = |s: &State| s.closed || s.bytes == 0 || s.bytes + len <= STREAM_AHEAD_BYTES;
        if state.stalled {
            return false;
        }
        self.wait_for_writer(&mut state, Instant::now() + STALL, near);
        near(&state)
    }

    /// Waits, until `deadline` at most, for the writer to make `done` true.
    fn wait_for_writer(
        &self,
        state: &mut parking_lot::MutexGuard<'_, State>,
        deadline: Instant,
        done: impl Fn(&State) -> bool,
    ) {
        while !done(state) {
            if self
                .shared
                .progressed
                .wait_until(state, deadline)
                .timed_out()
            {
                return;
            }
        }
    }

    /// Waits until everything queued so far is written (or lost), at most `timeout`.
    /// Returns how many batches are still waiting when it gives up (0: all written).
    pub fn drain(&self, timeout: Duration) -> usize {
        let mut state = self.shared.state.lock();
        self.wait_for_writer(&mut state, Instant::now() + timeout, |s| {
            s.records.is_empty() && !s.writing && !s.streaming
        });
        state
            .records
            .iter()
            .filter(|r| matches!(r, Record::Batch { .. }))
            .count()
    }

    /// The output's name in messages ("stdout" or its path, pid-named if another process
    /// held the one asked for).
    pub fn name(&self) -> &str {
        self.shared.name()
    }

    /// A file never opened (no batch came), not said so yet: true once.
    pub fn untouched_unsaid(&self) -> bool {
        self.shared.untouched_unsaid()
    }

    /// See `Shared::loss_unsaid`.
    pub fn loss_unsaid(&self, left: usize) -> bool {
        self.shared.loss_unsaid(left)
    }

    /// What this output could not write for `device` so far.
    pub fn losses(&self, device: u32) -> Losses {
        self.shared
            .state
            .lock()
            .losses
            .get(&device)
            .copied()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_output_counts_what_comes_and_keeps_no_text() {
        let output = Output::from_shared(Output::new_shared("test".into(), false));
        output.shared.state.lock().closed = true;
        output.stream_batch(1).finish(6, "BATCH 1\n".into());
        output.stream_batch(1).finish(4, "BATCH 2\n".into());
        output.stream_batch(2).finish(5, "BATCH 1\n".into());
        output.text("END OF FRAME 0\n".into());
        assert_eq!(
            output.losses(1),
            Losses {
                batches: 2,
                events: 10
            }
        );
        assert_eq!(output.losses(2).batches, 1);
        assert_eq!(output.shared.state.lock().records.len(), 0);
        assert!(
            output.buffer().capacity() > 0,
            "a lost record's buffer is kept for reuse"
        );
    }

    #[test]
    fn a_full_queue_stalls_then_drops_and_counts_without_waiting_again() {
        let output = Output::from_shared(Output::new_shared("test".into(), false));
        // No writer: the queue only fills. One record as large as the queue fills it.
        output.stream_batch(0).finish(1, "x".repeat(QUEUE_BYTES));
        let started = Instant::now();
        output.stream_batch(0).finish(7, "BATCH 2\n".into());
        let waited = started.elapsed();
        assert!(
            waited >= STALL,
            "the first record waited for room: {waited:?}"
        );
        let started = Instant::now();
        output.stream_batch(0).finish(5, "BATCH 3\n".into());
        assert!(
            started.elapsed() < Duration::from_millis(100),
            "a stalled output does not make every record wait"
        );
        assert_eq!(
            output.losses(0),
            Losses {
                batches: 2,
                events: 12
            }
        );
        // Nothing takes data: a drain gives up, saying one batch is still waiting.
        assert_eq!(output.drain(Duration::from_millis(10)), 1);
    }
}
