//! One capture asked through the control socket: the devices' slots given a sink writing
//! the file (`crate::sink::remote_slot`), the remote gate opened (`crate::trace::remote`),
//! then the file closed once the capture's last frame is written, or `stop` said. The file
//! is opened and held when the capture is asked (so that a refusal reaches the client), as
//! `GPU_TRACEFILE`s are ([`crate::sink::held_file`]): a path another process is writing
//! is replaced by a pid-named one beside it, which the client is told.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::config::Format;
use crate::sink::{csv::CsvSink, json::JsonSink, output::Output, txt::TxtSink, Sink};
use crate::sink::{held_file, remote_slot};
use crate::trace::remote::REMOTE;

/// A capture is in progress (one at a time).
static CAPTURING: AtomicBool = AtomicBool::new(false);
/// `stop` was asked.
static STOPPING: AtomicBool = AtomicBool::new(false);

pub fn capturing() -> bool {
    CAPTURING.load(Ordering::Relaxed)
}

/// What a finished capture wrote.
pub struct Done {
    pub frames: u32,
    pub batches: u64,
    pub events: u64,
    pub dropped: u64,
    pub stopped: bool,
    /// Where the capture was written.
    pub path: String,
}

/// Starts a capture of `frames` frames into `path`; `started` is called once it is under
/// way (the client hears `started`), then this returns when it is done.
pub fn run(
    frames: u32,
    format: Format,
    path: &str,
    started: &mut dyn FnMut(),
) -> Result<Done, String> {
    exclusive(|| capture(frames, format, path, started))
}

/// Runs `f` as the process's one capture or watch (both use the devices' slots and the
/// remote gate); refused when one is in progress.
pub fn exclusive<R>(f: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    if CAPTURING.swap(true, Ordering::AcqRel) {
        return Err("a capture is already in progress".into());
    }
    STOPPING.store(false, Ordering::Relaxed);
    let result = f();
    CAPTURING.store(false, Ordering::Release);
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
    let held = held_file::open(Path::new(path), "the capture output")
        .map_err(|e| format!("cannot write {path}: {e}"))?;
    let written_to = held.path.display().to_string();
    let out = crate::sink::writer::start_held(held);
    let make = |_device: u32| -> Box<dyn Sink> {
        match format {
            Format::Json => Box::new(JsonSink::new(out.clone())),
            Format::Csv => Box::new(CsvSink::new(out.clone())),
            _ => Box::new(TxtSink::new(out.clone())),
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
            // Every device went (the application destroyed them): the file is closed.
            REMOTE.stop(u32::MAX);
            break true;
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
