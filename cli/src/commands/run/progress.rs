//! The live line of `utrace run` (on stderr, when it is a terminal): frames, batches, events
//! and dropped events so far, read from the growing trace file. Only whole lines are
//! counted; a Perfetto trace (binary) shows its size only.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::TraceFormat;

/// What the trace says so far.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub frames: u64,
    pub batches: u64,
    pub events: u64,
    pub dropped: u64,
    pub bytes: u64,
}

impl Tally {
    /// Counts one whole line of a text trace.
    pub fn line(&mut self, format: TraceFormat, line: &str) {
        match format {
            TraceFormat::Txt => {
                if line.starts_with("BATCH ") {
                    self.batches += 1;
                } else if line.starts_with("END OF FRAME") {
                    self.frames += 1;
                } else if line.starts_with("END OF TRACE") {
                    self.dropped += field(line, "dropped=");
                } else if line.starts_with(|c: char| c.is_ascii_digit()) {
                    self.events += 1;
                }
            }
            TraceFormat::Json => {
                if line.starts_with("{\"type\":\"batch\"") {
                    self.batches += 1;
                    self.events += line.matches("{\"ns\":").count() as u64;
                } else if line.starts_with("{\"type\":\"end_of_frame\"") {
                    self.frames += 1;
                } else if line.starts_with("{\"type\":\"end_of_trace\"") {
                    self.dropped += field(line, "\"dropped\":");
                }
            }
            TraceFormat::Csv => {
                if line.contains(",end_of_trace,") {
                    self.dropped += field(line, "dropped=");
                } else if !line.starts_with("device,") {
                    // A row per event; batches and frames are columns, not lines.
                    self.events += 1;
                }
            }
            TraceFormat::Perfetto => {}
        }
    }

    pub fn message(&self, format: TraceFormat) -> String {
        let size = format!("{:.1} MB", self.bytes as f64 / 1e6);
        match format {
            TraceFormat::Perfetto => format!("tracing: {size} written"),
            TraceFormat::Csv => format!(
                "tracing: {} events, {} dropped, {size}",
                self.events, self.dropped
            ),
            _ => format!(
                "tracing: {} frames, {} batches, {} events, {} dropped, {size}",
                self.frames, self.batches, self.events, self.dropped
            ),
        }
    }
}

/// The number after `key` in `line`.
fn field(line: &str, key: &str) -> u64 {
    line.split_once(key)
        .map(|(_, rest)| {
            rest.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Follows the trace at `path` until stopped; shows the tally on a spinner line.
pub struct Live {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Live {
    pub fn start(path: PathBuf, format: TraceFormat) -> Live {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || follow(&path, format, &flag));
        Live {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn follow(path: &Path, format: TraceFormat, stop: &AtomicBool) {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    let mut tally = Tally::default();
    let (mut offset, mut partial) = (0u64, String::new());
    let mut chunk = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        if let Ok(mut file) = std::fs::File::open(path) {
            chunk.clear();
            let read = file
                .seek(SeekFrom::Start(offset))
                .and_then(|_| file.read_to_end(&mut chunk));
            if let Ok(n) = read {
                offset += n as u64;
                tally.bytes = offset;
                if format != TraceFormat::Perfetto {
                    partial.push_str(&String::from_utf8_lossy(&chunk));
                    // Whole lines only; the rest waits for the next read.
                    let whole = partial.rfind('\n').map_or(0, |at| at + 1);
                    for line in partial[..whole].lines() {
                        tally.line(format, line);
                    }
                    partial.drain(..whole);
                }
            }
        }
        bar.set_message(tally.message(format));
        std::thread::sleep(Duration::from_millis(200));
    }
    bar.finish_and_clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn txt_and_json_lines_are_tallied() {
        let mut t = Tally::default();
        for line in [
            "BATCH 1: device=0 queue=0x1 frame=0 submission=1 cmdbufs=1 queries=2 thread=9",
            "+----- NS -----+ +-- Δ --+  +----- MSG -----",
            "0000000000001000        +0: start_cmd_buffer: cmd=0x1",
            "0000000000002000     +1000: end_cmd_buffer: cmd=0x1",
            "ELAPSED: 1000 ns",
            "END OF FRAME 0",
            "END OF TRACE: device=0 batches=1 events=2 dropped=7",
        ] {
            t.line(TraceFormat::Txt, line);
        }
        assert_eq!((t.frames, t.batches, t.events, t.dropped), (1, 1, 2, 7));
        let mut j = Tally::default();
        for line in [
            r#"{"type":"batch","device":0,"events":[{"ns":1,"name":"a"},{"ns":2,"name":"b"}]}"#,
            r#"{"type":"end_of_frame","device":0,"frame":0}"#,
            r#"{"type":"end_of_trace","device":0,"batches":1,"events":2,"dropped":3}"#,
        ] {
            j.line(TraceFormat::Json, line);
        }
        assert_eq!((j.frames, j.batches, j.events, j.dropped), (1, 1, 2, 3));
        assert!(j
            .message(TraceFormat::Json)
            .contains("1 frames, 1 batches, 2 events, 3 dropped"));
    }
}
