//! The thread that writes one output's records, in order, each whole or not at all.
//!
//! - A regular file: before each record the writer knows where the file ends; a write that
//!   fails part-way (a full disk) is undone by truncating back to that point, the record
//!   is counted as lost, and the next record is tried as usual, so writing resumes, on a
//!   record boundary, as soon as there is room again.
//! - stdout: through the C library's stream ([`super::c_stdout`]).
//! - A reader that went away (`EPIPE`): the output closes, once, with a message, and what
//!   comes later is counted as lost. `SIGPIPE` is blocked in this thread only, so the
//!   failed write returns an error instead of killing the application.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use super::c_stdout;
use super::output::{Output, Record, Shared};

enum Target {
    Stdout,
    File {
        file: File,
        /// A regular file, which a failed write can be truncated back on.
        seekable: bool,
        /// Where the last whole record ends.
        end: u64,
    },
}

impl Target {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Target::Stdout => c_stdout::write(bytes),
            Target::File {
                file,
                seekable,
                end,
            } => match file.write_all(bytes) {
                Ok(()) => {
                    *end += bytes.len() as u64;
                    Ok(())
                }
                Err(e) => {
                    if *seekable {
                        // Undo the part that was written; if that fails too, say so with the
                        // write's error (the file may then hold a torn record).
                        let undone = file
                            .set_len(*end)
                            .and_then(|()| file.seek(SeekFrom::Start(*end)).map(|_| ()));
                        if let Err(u) = undone {
                            log::error!("could not undo a partly written trace record ({u})");
                        }
                    }
                    Err(e)
                }
            },
        }
    }
}

/// The output for stdout, its writer started.
pub fn start_stdout() -> Output {
    start("stdout".into(), Target::Stdout)
}

/// The output for the file at `path` (created, or truncated), its writer started.
pub fn start_file(path: &Path) -> io::Result<Output> {
    let file = File::create(path)?;
    let seekable = file.metadata().map(|m| m.is_file()).unwrap_or(false);
    Ok(start(
        path.display().to_string(),
        Target::File {
            file,
            seekable,
            end: 0,
        },
    ))
}

fn start(name: String, target: Target) -> Output {
    let shared = Output::new_shared(name);
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
            shared.name
        );
        shared.state.lock().closed = true;
    }
    Output::from_shared(shared)
}

/// Blocks SIGPIPE for the calling thread: a write to a pipe without a reader then fails
/// with `EPIPE` instead of killing the process.
fn block_sigpipe() {
    // SAFETY: a zeroed `sigset_t` is a valid argument for `sigemptyset`, which initialises
    // it; `pthread_sigmask` only changes the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

fn run(shared: &Shared, mut target: Target) {
    block_sigpipe();
    // The first write error of a run of failures, reported once until writes succeed again.
    let mut failing: Option<(io::Error, u64)> = None;
    loop {
        // Take the next record; an end record is rendered with what is lost so far.
        let (text, is_batch) = {
            let mut state = shared.state.lock();
            while state.records.is_empty() {
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
                    (text, Some((device, events)))
                }
                Record::Text(text) => {
                    state.bytes -= text.len();
                    (text, None)
                }
                Record::End {
                    device,
                    summary,
                    render,
                } => {
                    let mut text = state.spare.pop().unwrap_or_default();
                    let losses = state.losses.get(&device).copied().unwrap_or_default();
                    render(&losses.apply(&summary), &mut text);
                    (text, None)
                }
            };
            shared.progressed.notify_all();
            taken
        };
        let result = target.write(text.as_bytes());
        let mut state = shared.state.lock();
        state.writing = false;
        match result {
            Ok(()) => {
                if let Some((e, lost)) = failing.take() {
                    log::warn!(
                        "writing the trace to {} works again after {e}; {lost} batch(es) were lost meanwhile (counted as dropped)",
                        shared.name
                    );
                }
                state.recycle(text);
            }
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => {
                log::error!(
                    "the reader of the trace on {} went away ({e}); tracing to it stops, and later batches are counted as dropped",
                    shared.name
                );
                state.closed = true;
                lose(&mut state, text, is_batch);
                while let Some(record) = state.records.pop_front() {
                    state.lose(record);
                }
                state.bytes = 0;
                shared.progressed.notify_all();
                return;
            }
            Err(e) => {
                match &mut failing {
                    None => {
                        log::error!(
                            "writing the trace to {} failed ({e}); batches are dropped and counted until writes succeed again",
                            shared.name
                        );
                        failing = Some((e, u64::from(is_batch.is_some())));
                    }
                    Some((_, lost)) => *lost += u64::from(is_batch.is_some()),
                }
                lose(&mut state, text, is_batch);
            }
        }
        shared.progressed.notify_all();
    }
}

/// Counts a record taken from the queue as lost.
fn lose(state: &mut super::output::State, text: String, batch: Option<(u32, u64)>) {
    match batch {
        Some((device, events)) => state.lose(Record::Batch {
            device,
            events,
            text,
        }),
        None => state.recycle(text),
    }
}
