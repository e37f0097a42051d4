//! The thread that writes one output's records, in order, each whole or not at all, to its
//! [`Target`] (a file is opened there when the first batch comes).
//!
//! - A regular file: before each record the writer knows where the file ends; a write that
//!   fails part-way (a full disk) is undone by truncating back to that point, the record
//!   is counted as lost, and the next record is tried as usual, so writing resumes, on a
//!   record boundary, as soon as there is room again. A batch streamed in parts
//!   ([`super::batch_stream`]) is one record here: a part that fails, or a batch that ends
//!   torn, takes back every part of the batch already written.
//! - stdout: through the C library's stream ([`super::c_stdout`]).
//! - A reader that went away (`EPIPE`): the output closes, once, with a message, and what
//!   comes later is counted as lost. `SIGPIPE` is blocked in this thread only, so the
//!   failed write returns an error instead of killing the application.

use std::io;
use std::path::Path;
use std::sync::Arc;

use super::held_file::HeldFile;
use super::output::Output;
use super::record_queue::{Record, Shared, State};
use super::target::Target;

/// The output for stdout, its writer started.
pub fn start_stdout() -> Output {
    let output = start("stdout".into(), Target::Stdout, false);
    let _ = output.shared().opened.set("stdout".into());
    output
}

/// The output for the file at `path` (`what` names it in messages), its writer started;
/// the file is opened, held and truncated when the first batch comes ([`Target::open`]).
pub fn start_file(path: &Path, what: &'static str) -> Output {
    let target = Target::Unopened {
        path: path.to_path_buf(),
        what,
        early: Vec::new(),
    };
    start(path.display().to_string(), target, false)
}

/// The output for a file already held (a capture's, opened when it is asked).
pub fn start_held(held: HeldFile) -> Output {
    let streams = held.regular;
    let name = held.path.display().to_string();
    let output = start(name.clone(), Target::held(held), streams);
    let _ = output.shared().opened.set(name);
    output
}

/// `streams`: batches may come in parts (a file that a failed batch can be truncated
/// back on).
fn start(name: String, target: Target, streams: bool) -> Output {
    let shared = Output::new_shared(name, streams);
    let for_thread = Arc::clone(&shared);
    let spawned = std::thread::Builder::new()
        .name("utrace-writer".into())
        .spawn(move || {
            let _ =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&for_thread, target)));
        });
    if let Err(e) = spawned {
        log::error!(
            "could not start the writer of {} ({e}); its trace is lost",
            shared.name()
        );
        shared.state.lock().closed = true;
    }
    Output::from_shared(shared)
}

/// Blocks SIGPIPE for the calling thread: a write to a pipe without a reader then fails
/// with `EPIPE` instead of killing the process.
pub(crate) fn block_sigpipe() {
    // SAFETY: a zeroed `sigset_t` is a valid argument for `sigemptyset`, which initialises
    // it; `pthread_sigmask` only changes the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// What the writer took from the queue.
enum Taken {
    /// Text to write: a record's last (or only) piece when `whole`, with the batch it ends
    /// (device, events) if it ends one.
    Write {
        text: String,
        whole: bool,
        batch: Option<(u32, u64)>,
        /// The end of a device's trace (its tally, said on stderr if it cannot be written).
        end: bool,
        /// Worth opening the file for: a batch, or a device's end that counts batches
        /// written or lost (a device that traced nothing and lost nothing has nothing to
        /// say in a file it never opened).
        opens: bool,
    },
    /// A streamed batch that ended torn: what was written of it is taken back.
    Torn { device: u32, events: u64 },
}

/// The next record; None once the queue is empty and no handle is left to fill it.
fn take(shared: &Shared) -> Option<Taken> {
    let mut state = shared.state.lock();
    while state.records.is_empty() {
        if state.unowned {
            return None;
        }
        shared.queued.wait(&mut state);
    }
    let record = state.records.pop_front().expect("not empty");
    state.writing = true;
    state.stalled = false;
    let taken = match record {
        Record::Batch {
            device,
            events,
            text,
        } => {
            state.bytes -= text.len();
            Taken::Write {
                text,
                whole: true,
                batch: Some((device, events)),
                end: false,
                opens: true,
            }
        }
        Record::Part(text) => {
            state.bytes -= text.len();
            Taken::Write {
                text,
                whole: false,
                batch: None,
                end: false,
                opens: true,
            }
        }
        Record::Torn { device, events } => Taken::Torn { device, events },
        Record::Text(text) => {
            state.bytes -= text.len();
            Taken::Write {
                text,
                whole: true,
                batch: None,
                end: false,
                opens: false,
            }
        }
        // Opens the file (what the next batch would do), writing nothing more.
        Record::Open => Taken::Write {
            text: String::new(),
            whole: true,
            batch: None,
            end: false,
            opens: true,
        },
        Record::End {
            device,
            summary,
            render,
        } => {
            let mut text = state.spare.pop().unwrap_or_default();
            let losses = state.losses.get(&device).copied().unwrap_or_default();
            let tally = losses.apply(&summary);
            render(&tally, &mut text);
            Taken::Write {
                text,
                whole: true,
                batch: None,
                end: true,
                opens: tally.batches > 0 || tally.dropped > 0,
            }
        }
    };
    shared.progressed.notify_all();
    Some(taken)
}

fn run(shared: &Shared, mut target: Target) {
    block_sigpipe();
    // The first write error of a run of failures, reported once until writes succeed again.
    let mut failing: Option<(io::Error, u64)> = None;
    // A part of the streamed batch in progress failed (and what was written of it was
    // taken back): its later parts are dropped, its end counts it as lost.
    let mut discarding = false;
    // The output's header (csv) goes with the first record written.
    let mut header = Header::Unwritten;
    loop {
        // The file (a capture's, its handles gone) is closed as `target` goes.
        let Some(taken) = take(shared) else { return };
        let (text, whole, batch, end, opens) = match taken {
            Taken::Torn { device, events } => {
                target.abandon();
                header.taken_back();
                discarding = false;
                let mut state = shared.state.lock();
                state.writing = false;
                state.lose(Record::Torn { device, events });
                if let Some((_, lost)) = &mut failing {
                    *lost += 1;
                }
                shared.progressed.notify_all();
                continue;
            }
            Taken::Write {
                text,
                whole,
                batch,
                end,
                opens,
            } => (text, whole, batch, end, opens),
        };
        if discarding {
            discarding = !whole;
            let mut state = shared.state.lock();
            state.writing = false;
            if let Some((_, lost)) = failing.as_mut().filter(|_| batch.is_some()) {
                *lost += 1;
            }
            lose(&mut state, text, batch);
            shared.progressed.notify_all();
            continue;
        }
        // Before the first batch, a record without one waits; the first batch (or a device's
        // end that lost some) opens the file.
        if !opens && target.keep_early(&text) {
            let mut state = shared.state.lock();
            state.writing = false;
            state.recycle(text);
            shared.progressed.notify_all();
            continue;
        }
        for early in target.open(shared) {
            let written = write_with_header(&mut target, shared, &mut header, &early, true);
            if let (Err(e), None) = (written, &failing) {
                log::error!(
                    "writing the trace to {} failed ({e}); batches are dropped and counted until writes succeed again",
                    shared.name()
                );
                failing = Some((e, 0));
            }
        }
        if text.is_empty() {
            // An open asked for by a batch being formatted: the batch itself follows.
            let mut state = shared.state.lock();
            state.writing = false;
            shared.progressed.notify_all();
            continue;
        }
        let result = write_with_header(&mut target, shared, &mut header, &text, whole);
        let mut state = shared.state.lock();
        state.writing = false;
        match result {
            Ok(()) => {
                if let Some((e, lost)) = failing.take() {
                    log::warn!(
                        "writing the trace to {} works again after {e}; {lost} batch(es) were lost meanwhile (counted as dropped)",
                        shared.name()
                    );
                }
                state.recycle(text);
            }
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => {
                log::error!(
                    "the reader of the trace on {} went away ({e}); tracing to it stops, and later batches are counted as dropped",
                    shared.name()
                );
                state.closed = true;
                lose(&mut state, text, batch);
                while let Some(record) = state.records.pop_front() {
                    state.lose(record);
                }
                state.bytes = 0;
                shared.progressed.notify_all();
                return;
            }
            Err(e) => {
                if end {
                    // The tally of what was written and lost would otherwise be lost too.
                    log::error!(
                        "the end of a device's trace could not be written to {} ({e}); it reads: {}",
                        shared.name(),
                        text.trim_end()
                    );
                }
                // A failed part loses its whole batch, counted when the batch's end comes.
                discarding = !whole;
                let lost_now = u64::from(batch.is_some());
                match &mut failing {
                    None => {
                        log::error!(
                            "writing the trace to {} failed ({e}); batches are dropped and counted until writes succeed again",
                            shared.name()
                        );
                        failing = Some((e, lost_now));
                    }
                    Some((_, lost)) => *lost += lost_now,
                }
                lose(&mut state, text, batch);
            }
        }
        shared.progressed.notify_all();
    }
}

/// Where the output's header (csv) stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Header {
    Unwritten,
    /// Written with parts of a batch whose end has not come: taken back with them if the
    /// batch fails.
    Pending,
    Written,
}

impl Header {
    fn taken_back(&mut self) {
        if *self == Header::Pending {
            *self = Header::Unwritten;
        }
    }
}

/// Writes `text` (see [`Target::write`]), the output's header first if it is not in the
/// file yet: the header belongs to the record, and is taken back with it if the record
/// cannot be written whole.
fn write_with_header(
    target: &mut Target,
    shared: &Shared,
    header: &mut Header,
    text: &str,
    whole: bool,
) -> io::Result<()> {
    let written = (|| {
        if let (Header::Unwritten, Some(h)) = (*header, shared.header.get()) {
            target.write(h.as_bytes(), false)?;
            *header = Header::Pending;
        }
        target.write(text.as_bytes(), whole)
    })();
    match written {
        Ok(()) if whole && *header == Header::Pending => *header = Header::Written,
        Ok(()) => {}
        // The write took back what was written of the record, header included.
        Err(_) => header.taken_back(),
    }
    written
}

/// Counts a record taken from the queue as lost.
fn lose(state: &mut State, text: String, batch: Option<(u32, u64)>) {
    match batch {
        Some((device, events)) => state.lose(Record::Batch {
            device,
            events,
            text,
        }),
        None => state.recycle(text),
    }
}
