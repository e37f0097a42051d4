//! `GPU_TRACE_FORMAT=perfetto`: an in-process tracing session that enables the data source
//! from the first traced device on (or from the first frame of a `GPU_TRACE_FRAMES`
//! window) and writes its trace into `GPU_TRACEFILE` as it goes: Perfetto's service flushes
//! the data source and appends what it holds to the file every [`FILE_WRITE_PERIOD_MS`], so a
//! process stopped any way (Ctrl-C, SIGTERM, `kill -9`) leaves a trace that decodes, missing
//! at most the last period. The sink never runs more than half the ring ahead of
//! the file ([`super::file_pace`]): a ring that came round before the service wrote it
//! out would lose stages without a word. The session ends when the window closes, the last device is
//! destroyed or the process exits with devices alive.
//!
//! The path is touched only once a batch is traced ([`super::trace_file`]): until then the
//! session writes into a staging file of its own, removed if nothing is traced. The path is
//! then held against other processes, as text traces are. A later session of the same
//! process (devices created again) writes to a file of its own beside it, appended to the
//! trace when it ends: concatenated traces are one trace.

use std::sync::atomic::{AtomicBool, Ordering};

use std::path::{Path, PathBuf};
use std::time::Duration;

use parking_lot::Mutex;
use perfetto_sdk::heap_buffer::HeapBuffer;
use perfetto_sdk::pb_msg::{PbMsg, PbMsgWriter};
use perfetto_sdk::protos::config::data_source_config::DataSourceConfig;
use perfetto_sdk::protos::config::trace_config::{
    BufferConfigFillPolicy, TraceConfig, TraceConfigBufferConfig, TraceConfigDataSource,
    TraceConfigIncrementalStateConfig, TraceConfigWriteFlushMode,
};
use perfetto_sdk::tracing_session::TracingSession;

use super::super::held_file::HeldFile;
use super::super::OutputChoice;
use super::trace_file::{self, append_and_remove, later_session_file};
use crate::config::{expand_path, Destination, DEFAULT_PERFETTO_FILE};

/// Interned data is re-sent this often, so that a ring buffer that wrapped still holds
/// the specifications its remaining events refer to.
const CLEAR_PERIOD_MS: u32 = 1000;
/// How often the service writes what it holds into the file (after flushing the data
/// source): what a killed process can lose, and, with the half of the ring the sink may
/// run ahead of the file, how fast stages can be written (at most 32 MiB of the default
/// 64 MiB ring per 100 ms; the service's own writing is slower). Perfetto's shortest.
pub const FILE_WRITE_PERIOD_MS: u32 = 100;

struct FileState {
    session: Option<TracingSession>,
    /// The configured path.
    path: PathBuf,
    /// The file holding the trace, once a batch was traced: at `path`, or a pid-named or
    /// fallback file when `path` could not be held. Locked while the process lives.
    held: Option<HeldFile>,
    /// Where the running session writes: a staging file until a batch is traced, the held
    /// file then; for a later session, a file beside it appended to it when it ends.
    session_file: Option<PathBuf>,
    buffer_kb: u32,
    /// Devices feeding the file.
    devices: u32,
    /// "Nothing was traced" was said.
    said_nothing: bool,
}

/// A session writes into a staging file and waits for its first batch to claim the path.
static CLAIM_PENDING: AtomicBool = AtomicBool::new(false);
/// A batch was traced since the running session started.
static BATCH_TRACED: AtomicBool = AtomicBool::new(false);

/// The state, sendable: it lives in a static mutex.
struct SendSession(FileState);
// SAFETY: a TracingSession is a handle to Perfetto's session object, which its C API allows
// to use from any thread; it is only touched under the mutex.
unsafe impl Send for SendSession {}

static STATE: Mutex<Option<SendSession>> = Mutex::new(None);

/// A device writes to the file; the session starts now unless a frame window starts it.
pub fn device_added(config: &OutputChoice, start_now: bool) {
    let mut guard = STATE.lock();
    let state = &mut guard
        .get_or_insert_with(|| SendSession(FileState::new(config)))
        .0;
    state.devices += 1;
    if start_now {
        state.start();
    }
}

/// Starts the session if none runs (a frame window opened).
pub fn start() {
    if let Some(SendSession(state)) = STATE.lock().as_mut() {
        state.start();
    }
}

/// Stops the session and writes its trace (a frame window closed).
pub fn finish() {
    if let Some(SendSession(state)) = STATE.lock().as_mut() {
        state.finish();
    }
}

/// A device is gone; the last one ends the session.
pub fn device_removed() {
    if let Some(SendSession(state)) = STATE.lock().as_mut() {
        state.devices = state.devices.saturating_sub(1);
        if state.devices == 0 {
            state.finish();
            state.all_devices_gone();
        }
    }
}

/// A batch was traced (called by every device's sink, on its traceq thread): the first
/// one of an unclaimed session holds the path. One atomic load otherwise. Never waits for
/// the state: a session stopping holds it while it waits for these threads.
pub fn batch_traced() {
    if !CLAIM_PENDING.load(Ordering::Relaxed) {
        return;
    }
    BATCH_TRACED.store(true, Ordering::Relaxed);
    if let Some(mut guard) = STATE.try_lock() {
        if let Some(SendSession(state)) = guard.as_mut() {
            state.claim();
        }
    }
}

impl FileState {
    fn new(config: &OutputChoice) -> FileState {
        FileState {
            session: None,
            path: trace_path(config),
            held: None,
            session_file: None,
            buffer_kb: config.perfetto_buffer_kb,
            devices: 0,
            said_nothing: false,
        }
    }

    fn start(&mut self) {
        if self.session.is_some() {
            return;
        }
        let file = match &self.held {
            Some(held) => match later_session_file(&held.path) {
                Some(file) => file,
                None => {
                    log::error!(
                        "no file beside {} for another Perfetto session; this one is not recorded",
                        held.path.display()
                    );
                    return;
                }
            },
            None => trace_file::staging_file(&self.path),
        };
        match TracingSession::in_process() {
            Ok(mut session) => {
                session.setup(&trace_config(self.buffer_kb, Some(&file)));
                BATCH_TRACED.store(false, Ordering::Relaxed);
                CLAIM_PENDING.store(self.held.is_none(), Ordering::Relaxed);
                // Returns once the data source started: the devices capture from here on.
                session.start_blocking();
                // The service created the file: its size says what it wrote so far.
                match std::fs::File::open(&file) {
                    Ok(written) => super::file_pace::start(
                        written,
                        self.buffer_kb,
                        Duration::from_millis(u64::from(FILE_WRITE_PERIOD_MS)),
                    ),
                    Err(e) => log::warn!(
                        "the Perfetto session's file {} cannot be watched ({e}); a trace written faster than the service moves it out may lose stages",
                        file.display()
                    ),
                }
                self.session = Some(session);
                self.session_file = Some(file);
            }
            Err(e) => log::error!("could not start the in-process Perfetto session ({e})"),
        }
    }

    /// The running session's staging file becomes the trace (a batch was traced).
    fn claim(&mut self) {
        if !CLAIM_PENDING.swap(false, Ordering::Relaxed) || self.held.is_some() {
            return;
        }
        let Some(staging) = self.session_file.take() else {
            return;
        };
        self.held = trace_file::claim(&self.path, &staging);
        self.session_file = Some(self.held.as_ref().map_or(staging, |h| h.path.clone()));
    }

    /// Stops the session: its on-stop lets every device write what it submitted first, then
    /// the service writes the rest of the trace into the file.
    fn finish(&mut self) {
        let Some(mut session) = self.session.take() else {
            return;
        };
        // The batches drained while the session stops are not held back: the service
        // writes what it holds once they are in.
        super::file_pace::stop();
        session.stop_blocking();
        drop(session);
        if BATCH_TRACED.load(Ordering::Relaxed) {
            // Traced after the last chance to claim (or while the state was busy).
            self.claim();
        }
        CLAIM_PENDING.store(false, Ordering::Relaxed);
        let Some(file) = self.session_file.take() else {
            return;
        };
        let Some(held) = &self.held else {
            // Nothing traced: the staging file goes, the path was never touched.
            let _ = std::fs::remove_file(&file);
            return;
        };
        if file != held.path {
            if let Err(e) = append_and_remove(&file, &held.file) {
                log::error!(
                    "appending the Perfetto session {} to {} failed ({e}); it stays in {}",
                    file.display(),
                    held.path.display(),
                    file.display()
                );
            }
        }
        let size = held.file.metadata().map(|m| m.len()).unwrap_or(0);
        log::info!(
            "Perfetto trace written to {} ({size} bytes)",
            held.path.display()
        );
    }

    /// The last device is gone: says once if nothing was ever traced.
    fn all_devices_gone(&mut self) {
        if self.held.is_none() && !self.said_nothing {
            self.said_nothing = true;
            log::info!(
                "nothing was traced to {}: the path was left as it was",
                self.path.display()
            );
        }
    }
}

fn trace_path(config: &OutputChoice) -> PathBuf {
    let template = match &config.destination {
        Destination::File(t) => t.as_str(),
        Destination::Stdout => DEFAULT_PERFETTO_FILE,
    };
    // One file for all devices: `%i` is 0.
    expand_path(template, std::process::id(), 0)
}

/// A trace config with one ring buffer and utrace's data source, its incremental state
/// cleared every second; with `file`, the service writes the trace into it as it goes
/// (flushing the data source before each write).
pub fn trace_config(buffer_kb: u32, file: Option<&Path>) -> Vec<u8> {
    let writer = PbMsgWriter::new();
    let heap = HeapBuffer::new(writer.stream_writer());
    let Ok(mut msg) = PbMsg::new(&writer) else {
        return Vec::new();
    };
    {
        let mut cfg = TraceConfig { msg: &mut msg };
        cfg.set_buffers(|b: &mut TraceConfigBufferConfig| {
            b.set_size_kb(buffer_kb);
            b.set_fill_policy(BufferConfigFillPolicy::RingBuffer);
        });
        cfg.set_data_sources(|ds: &mut TraceConfigDataSource| {
            ds.set_config(|c: &mut DataSourceConfig| {
                c.set_name(super::DATA_SOURCE_NAME);
            });
        });
        cfg.set_incremental_state_config(|i: &mut TraceConfigIncrementalStateConfig| {
            i.set_clear_period_ms(CLEAR_PERIOD_MS);
        });
        if let Some(file) = file {
            cfg.set_write_into_file(true);
            cfg.set_output_path(file.to_string_lossy().as_ref());
            cfg.set_file_write_period_ms(FILE_WRITE_PERIOD_MS);
            cfg.set_write_flush_mode(TraceConfigWriteFlushMode::WriteFlushDisabled);
        }
    }
    msg.finalize();
    let mut bytes = vec![0u8; writer.stream_writer().get_written_size()];
    heap.copy_into(&mut bytes);
    bytes
}
