//! One capture asked through the control socket: the devices' slots given a sink writing
//! the file (`crate::sink::remote_slot`), the remote gate opened (`crate::trace::remote`),
//! then the file closed once the capture's last frame is written, `stop` said, or every
//! device gone. The file is opened and held when the capture is asked (so that a refusal
//! reaches the client), as `GPU_TRACEFILE`s are ([`crate::sink::held_file`]): a path
//! another process is writing is replaced by a pid-named one beside it, which the client
//! is told.
//!
//! The answer has one meaning whatever the order of the application's last calls: `done`
//! only when every frame asked was written, `ended` (with the frames written) otherwise.
//! A process that exits during a capture closes its devices' traces in its exit handler,
//! which then waits (bounded) for [`answered`] so that the client hears `ended` before the
//! connection goes with the process.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::config::Format;
use crate::sink::{csv::CsvSink, json::JsonSink, output::Output, txt::TxtSink, Sink};
use crate::sink::{held_file, remote_slot};
use crate::trace::remote::REMOTE;

/// What is in progress, one at a time: nothing, a capture ([`Exclusive::Capture`]) or a
/// watch ([`Exclusive::Watch`]).
static CAPTURING: AtomicU8 = AtomicU8::new(0);

/// What holds the devices' slots and the remote gate.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exclusive {
    Capture = 1,
    Watch = 2,
}
/// `stop` was asked.
static STOPPING: AtomicBool = AtomicBool::new(false);

pub fn capturing() -> bool {
    CAPTURING.load(Ordering::Relaxed) != 0
}

/// Captures whose last line is not yet said (the exit handler waits for none to be left).
static UNANSWERED: Mutex<usize> = Mutex::new(0);
static ANSWERED: Condvar = Condvar::new();

/// What a finished capture wrote.
pub struct Done {
    /// Frame ends written.
    pub frames: u32,
    /// Frames asked.
    pub asked: u32,
    pub batches: u64,
    pub events: u64,
    pub dropped: u64,
    /// `stop` ended it.
    pub stopped: bool,
    /// Where the capture was written.
    pub path: String,
}

impl Done {
    /// The capture's last line: `done` when every frame asked was written, `ended` when
    /// `stop`, the devices' end or the process's exit cut it short. The file goes last (a
    /// path may hold spaces).
    pub fn line(&self) -> String {
        let Done {
            frames,
            asked,
            batches,
            events,
            dropped,
            stopped,
            path,
        } = self;
        let counts = format!("frames={frames} batches={batches} events={events} dropped={dropped}");
        if !stopped && frames >= asked {
            format!("done {counts} file={path}")
        } else {
            let stopped = if *stopped { " stopped=1" } else { "" };
            format!("ended {counts} asked={asked}{stopped} file={path}")
        }
    }
}

/// Runs a capture of `frames` frames into `path`, saying its lines through `say`:
/// `started` once it is under way, then its end (`done`, `ended` or `error`). Returns once
/// the last line is said.
pub fn run(frames: u32, format: Format, path: &str, say: &mut dyn FnMut(&str)) {
    let _unanswered = Unanswered::count();
    let result = exclusive(Exclusive::Capture, || {
        capture(frames, format, path, &mut || say("started"))
    });
    match result {
        Ok(done) => say(&done.line()),
        Err(e) => say(&format!("error {e}")),
    }
}

/// One capture not yet answered, from its request to its last line.
struct Unanswered;

impl Unanswered {
    fn count() -> Unanswered {
        *UNANSWERED.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        Unanswered
    }
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        let mut left = UNANSWERED.lock().unwrap_or_else(|e| e.into_inner());
        *left = left.saturating_sub(1);
        ANSWERED.notify_all();
    }
}

/// Waits, at most `timeout`, until every capture in progress has said its last line; for
/// the exit handler, once the devices' traces are closed (which ends their captures).
/// Whether none is left unanswered.
pub fn answered(timeout: Duration) -> bool {
    let left = UNANSWERED.lock().unwrap_or_else(|e| e.into_inner());
    match ANSWERED.wait_timeout_while(left, timeout, |left| *left > 0) {
        Ok((left, _)) => *left == 0,
        Err(_) => false,
    }
}

/// Runs `f` as the process's one capture or watch, `what` (both use the devices' slots and
/// the remote gate); refused, naming the one in progress, when there is one.
pub fn exclusive<R>(what: Exclusive, f: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    if let Err(held) =
        CAPTURING.compare_exchange(0, what as u8, Ordering::AcqRel, Ordering::Acquire)
    {
        return Err(if held == Exclusive::Watch as u8 {
            "a watch (utrace top) is already in progress".into()
        } else {
            "a capture is already in progress".into()
        });
    }
    STOPPING.store(false, Ordering::Relaxed);
    let result = f();
    CAPTURING.store(0, Ordering::Release);
    result
}

/// Whether `stop` was asked of the capture or watch in progress.
pub fn stop_asked() -> bool {
    STOPPING.load(Ordering::Relaxed)
}

fn capture(
    frames: u32,
    format: Format,
    path: &str,
    started: &mut dyn FnMut(),
) -> Result<Done, String> {
    let held = held_file::open_as(
        Path::new(path),
        "the capture output",
        held_file::Kind::AnyNow,
    )
    .map_err(|e| format!("cannot write {path}: {e}"))?;
    let written_to = held.path.display().to_string();
    let out = crate::sink::writer::start_held(held);
    let make = |_device: u32, header| -> Box<dyn Sink> {
        match format {
            Format::Json => Box::new(JsonSink::new(out.clone(), header)),
            Format::Csv => Box::new(CsvSink::new(out.clone(), header)),
            _ => Box::new(TxtSink::new(out.clone(), header)),
        }
    };
    let devices = remote_slot::install(&make);
    if devices.is_empty() {
        remote_slot::finish(Duration::from_secs(1));
        return Err("no device of this process is traced".into());
    }
    REMOTE.request(frames);
    log::info!("capture of {frames} frame(s) to {path} asked through the control socket");
    started();
    // The last frame's end, written after every batch of it, closes the capture; `stop`
    // ends it at once (batches still in flight are left out).
    let stopped = loop {
        if remote_slot::wait_done(Duration::from_millis(100)) {
            break false;
        }
        if !remote_slot::any_open() {
            // Every device went (the application destroyed them, or exits): their parts of
            // the file are closed, and it holds fewer frames than asked.
            REMOTE.stop(u32::MAX);
            break false;
        }
        if stop_asked() {
            REMOTE.stop(u32::MAX);
            // A moment for the batches already completing.
            std::thread::sleep(Duration::from_millis(200));
            break true;
        }
    };
    let totals = remote_slot::finish(Duration::from_secs(5));
    let lost = losses(&out, &devices);
    Ok(Done {
        frames: totals.frames,
        asked: frames,
        batches: totals.batches.saturating_sub(lost.0),
        events: totals.events.saturating_sub(lost.1),
        dropped: lost.1,
        stopped,
        path: written_to,
    })
}

/// Batches and events the file could not take (a full disk).
fn losses(out: &Output, devices: &[u32]) -> (u64, u64) {
    devices.iter().fold((0, 0), |(b, e), &d| {
        let l = out.losses(d);
        (b + l.batches, e + l.events)
    })
}

/// `stop`: ends the capture in progress; false when there is none.
pub fn stop() -> bool {
    if !capturing() {
        return false;
    }
    STOPPING.store(true, Ordering::Relaxed);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_only_when_every_frame_asked_was_written() {
        let done = |frames, stopped| Done {
            frames,
            asked: 5,
            batches: 7,
            events: 42,
            dropped: 0,
            stopped,
            path: "/tmp/a b.txt".into(),
        };
        assert_eq!(
            done(5, false).line(),
            "done frames=5 batches=7 events=42 dropped=0 file=/tmp/a b.txt"
        );
        assert_eq!(
            done(3, false).line(),
            "ended frames=3 batches=7 events=42 dropped=0 asked=5 file=/tmp/a b.txt"
        );
        assert_eq!(
            done(5, true).line(),
            "ended frames=5 batches=7 events=42 dropped=0 asked=5 stopped=1 file=/tmp/a b.txt"
        );
    }
}
