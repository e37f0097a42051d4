//! A batch handed to its output in parts as it is formatted.
//!
//! Formatting a batch of a million draws into one string took ~150 MB of fresh memory,
//! whose page faults and remappings cost the traceq thread more than the formatting
//! itself. To a regular file the formats instead hand the writer a part whenever about
//! [`PART_BYTES`] are formatted (at an event's end), reusing the output's spare buffers, so
//! memory stays bounded by the output's queue and the writer writes while the next part is
//! formatted. A batch stays whole or absent: the writer truncates the file back to before
//! a batch whose write failed part-way, and a batch whose rest could not be queued (a
//! stalled output) ends with a `Torn` record that does the same; either way it is counted
//! as lost. Other destinations (stdout, pipes) cannot be truncated back, so there a batch
//! is still one record. The output's gate is held across the batch, so the records of
//! the other devices sharing the output go in before or after it, never between its parts.

use std::sync::atomic::Ordering;

use parking_lot::MutexGuard;

use super::output::{Output, PART_BYTES};
use super::record_queue::Record;

pub struct BatchStream<'o> {
    out: &'o Output,
    _gate: MutexGuard<'o, ()>,
    device: u32,
    /// Parts of this batch are queued.
    parted: bool,
    /// A part could not be queued: the rest is discarded and the batch ends torn.
    torn: bool,
    /// The output was asked to open its file (a batch's first part was ready before it was).
    asked_open: bool,
    /// A part waited [`super::output::STALL`] to stream in vain: later parts do not wait.
    slow: bool,
}

impl Output {
    /// Starts a batch of device `device`; its text goes to [`BatchStream::spill`] as it
    /// grows and to [`BatchStream::finish`] at its end.
    pub fn stream_batch(&self, device: u32) -> BatchStream<'_> {
        let gate = self.shared().gate.lock();
        self.shared().state.lock().streaming = true;
        BatchStream {
            out: self,
            _gate: gate,
            device,
            parted: false,
            torn: false,
            asked_open: false,
            slow: false,
        }
    }
}

impl BatchStream<'_> {
    /// Called by a format at the end of each event: when `buf` holds a part's worth and
    /// the output streams, hands it to the writer and leaves `buf` empty.
    pub fn spill(&mut self, buf: &mut String) {
        if buf.len() < PART_BYTES {
            return;
        }
        if !self.out.shared().streams.load(Ordering::Relaxed) {
            // The first batch into a file opened when it comes: whether the file streams
            // is known once it is open (a batch of a million draws is 200 MB of text).
            if self.asked_open {
                return;
            }
            self.asked_open = true;
            self.out.open_now();
            if !self.out.shared().streams.load(Ordering::Relaxed) {
                return;
            }
        }
        if self.torn {
            buf.clear();
            return;
        }
        if !self.slow && !self.out.wait_to_stream(buf.len()) {
            self.slow = true;
        }
        let part = std::mem::replace(buf, self.out.buffer());
        match self.out.try_push(Record::Part(part)) {
            Ok(()) => self.parted = true,
            Err(record) => {
                self.torn = true;
                self.out.shared().state.lock().lose(record);
            }
        }
    }

    /// Ends the batch with its last text; `events` are its events (counted as lost if the
    /// batch cannot be written whole).
    pub fn finish(self, events: u64, text: String) {
        let device = self.device;
        let last = Record::Batch {
            device,
            events,
            text,
        };
        let refused = if self.torn {
            Some(last)
        } else {
            self.out.try_push(last).err()
        };
        match refused {
            None => {}
            // The parts already queued are written, then taken back and counted by the
            // writer when it meets the Torn record.
            Some(Record::Batch { text, .. }) if self.parted => {
                self.out.shared().state.lock().recycle(text);
                self.out.push_forced(Record::Torn { device, events });
            }
            Some(record) => self.out.shared().state.lock().lose(record),
        }
        let shared = self.out.shared();
        shared.state.lock().streaming = false;
        shared.progressed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::record_queue::Losses;

    fn output(streams: bool) -> Output {
        Output::from_shared(Output::new_shared("test".into(), streams))
    }

    /// The records queued, as (kind, length).
    fn queued(out: &Output) -> Vec<(&'static str, usize)> {
        out.shared()
            .state
            .lock()
            .records
            .iter()
            .map(|r| match r {
                Record::Part(t) => ("part", t.len()),
                Record::Batch { text, .. } => ("batch", text.len()),
                Record::Torn { .. } => ("torn", 0),
                Record::Text(t) => ("text", t.len()),
                Record::End { .. } => ("end", 0),
                Record::Open => ("open", 0),
            })
            .collect()
    }

    #[test]
    fn a_large_batch_goes_in_parts_to_a_file_and_whole_elsewhere() {
        for streams in [true, false] {
            let out = output(streams);
            // Open already (stdout, or a file that does not stream).
            let _ = out.shared().opened.set("test".into());
            let mut stream = out.stream_batch(1);
            let mut buf = String::new();
            for _ in 0..3 {
                buf.push_str(&"x".repeat(PART_BYTES / 2 + 1));
                stream.spill(&mut buf);
            }
            stream.finish(9, buf);
            let got = queued(&out);
            if streams {
                // Spilled once the buffer passed a part's worth (after the second event).
                assert_eq!(
                    got,
                    [("part", PART_BYTES + 2), ("batch", PART_BYTES / 2 + 1)]
                );
            } else {
                assert_eq!(got, [("batch", 3 * (PART_BYTES / 2 + 1))]);
            }
            assert!(!out.shared().state.lock().streaming);
        }
    }

    #[test]
    fn a_batch_whose_rest_cannot_be_queued_ends_torn_and_counted() {
        let out = output(true);
        // No writer: the queue fills. The first part fits (an empty queue takes anything).
        let mut stream = out.stream_batch(2);
        let mut buf = "y".repeat(super::super::output::QUEUE_BYTES);
        stream.spill(&mut buf);
        // The output now counts as stalled when the next part finds no room.
        out.shared().state.lock().stalled = true;
        buf.push_str(&"z".repeat(PART_BYTES));
        stream.spill(&mut buf);
        assert!(buf.is_empty(), "the rest of a torn batch is discarded");
        buf.push_str("ELAPSED: 1 ns\n");
        stream.finish(7, buf);
        let kinds: Vec<&str> = queued(&out).into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            kinds,
            ["part", "torn"],
            "the writer takes the first part back"
        );
        // The writer counts the torn batch when it meets it; nothing was counted yet.
        assert_eq!(out.losses(2), Losses::default());
    }

    /// A file opened when the first batch comes is opened as soon as that batch has a part
    /// to hand over: the first batch streams too (and the records before it come first).
    #[test]
    fn the_first_batch_into_a_file_not_opened_yet_streams() {
        let dir = std::env::temp_dir().join(format!("utrace-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("first.txt");
        let out = super::super::writer::start_file(&path, "test");
        out.text("END OF FRAME 0\n".into());
        let mut stream = out.stream_batch(1);
        let (mut buf, mut all) = (String::new(), "END OF FRAME 0\n".to_string());
        for _ in 0..3 {
            let event = "x".repeat(PART_BYTES / 2 + 1) + "\n";
            buf.push_str(&event);
            all.push_str(&event);
            stream.spill(&mut buf);
        }
        assert!(stream.parted, "the first batch went in parts");
        stream.finish(3, buf);
        assert_eq!(out.drain(std::time::Duration::from_secs(10)), 0);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), all);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A batch formatted faster than its file takes it holds a few parts at a time: past
    /// `STREAM_AHEAD_BYTES` queued, the next part waits for the writer.
    #[test]
    fn a_streamed_batch_waits_for_the_writer_past_a_few_parts() {
        use super::super::output::STREAM_AHEAD_BYTES;
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        let out = output(true);
        let _ = out.shared().opened.set("test".into());
        // A writer that takes a part a millisecond.
        let (taker, stop) = (out.clone(), Arc::new(AtomicBool::new(false)));
        let stopped = Arc::clone(&stop);
        let writer = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(1));
                let mut state = taker.shared().state.lock();
                if let Some(Record::Part(text)) = state.records.pop_front() {
                    state.bytes -= text.len();
                }
                taker.shared().progressed.notify_all();
            }
        });
        let mut stream = out.stream_batch(0);
        let (mut buf, mut most) = (String::new(), 0);
        for _ in 0..32 {
            buf.push_str(&"x".repeat(PART_BYTES));
            stream.spill(&mut buf);
            most = most.max(out.shared().state.lock().bytes);
        }
        assert!(stream.parted && !stream.slow);
        assert!(most <= STREAM_AHEAD_BYTES, "{most} bytes queued ahead");
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
    }
}
