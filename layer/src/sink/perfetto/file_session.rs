//! `GPU_TRACE_FORMAT=perfetto`: an in-process tracing session that enables the data source
//! from the first traced device on (or from the first frame of a `GPU_TRACE_FRAMES`
//! window) and writes its trace into `GPU_TRACEFILE` as it goes: the layer reads the
//! session's ring into the file every [`super::file_drain::DRAIN_PERIOD`], and whenever a
//! traceq thread handed it a quarter of the ring ([`super::file_drain`]), so a process
//! stopped any way (Ctrl-C, SIGTERM, `kill -9`) leaves a trace that decodes, missing at
//! most the last period, and the ring never comes round over stages not yet in the file.
//! The session ends when the window closes, the last device is destroyed or the process
//! exits with devices alive.
//!
//! The path is touched only once a batch is traced ([`super::trace_file`]): until then the
//! session writes into a staging file of its own, removed if nothing is traced. The path is
//! then held against other processes, as text traces are. A later session of the same
//! process (devices created again) writes to a file of its own beside it, appended to the
//! trace when it ends: concatenated traces are one trace.

use std::sync::atomic::{AtomicBool, Ordering};

use std::fs::File;
use std::path::PathBuf;

use parking_lot::Mutex;
use perfetto_sdk::heap_buffer::HeapBuffer;
use perfetto_sdk::pb_msg::{PbMsg, PbMsgWriter};
use perfetto_sdk::protos::config::data_source_config::DataSourceConfig;
use perfetto_sdk::protos::config::trace_config::{
    BufferConfigFillPolicy, TraceConfig, TraceConfigBufferConfig, TraceConfigDataSource,
    TraceConfigIncrementalStateConfig,
};
use perfetto_sdk::tracing_session::TracingSession;

use super::super::held_file::HeldFile;
use super::super::OutputChoice;
use super::file_drain::Output;
use super::trace_file::{self, append_and_remove, later_session_file};
use super::SessionHooks;
use crate::config::{expand_path, Destination, DEFAULT_PERFETTO_FILE};

/// Interned data is re-sent this often, so that a ring buffer that wrapped still holds
/// the specifications its remaining events refer to.
const CLEAR_PERIOD_MS: u32 = 1000;

struct FileState {
    /// The configured path.
    path: PathBuf,
    /// The file holding the trace, once a batch was traced: at `path`, or a pid-named or
    /// fallback file when `path` could not be held. Locked while the process lives.
    held: Option<HeldFile>,
    /// Where the running session writes: a staging file until a batch is traced, the held
    /// file then; for a later session, a file beside it appended to it when it ends.
    session_file: Option<PathBuf>,
    buffer_kb: u32,
    /// What the session's stop does to the devices.
    hooks: SessionHooks,
    /// Devices feeding the file.
    devices: u32,
    /// "Nothing was traced" was said.
    said_nothing: bool,
}

/// A session writes into a staging file and waits for its first batch to claim the path.
static CLAIM_PENDING: AtomicBool = AtomicBool::new(false);
/// A batch was traced since the running session started.
static BATCH_TRACED: AtomicBool = AtomicBool::new(false);

static STATE: Mutex<Option<FileState>> = Mutex::new(None);

/// A device writes to the file; the session starts now unless a frame window starts it.
pub fn device_added(config: &OutputChoice, hooks: SessionHooks, start_now: bool) {
    let mut guard = STATE.lock();
    let state = &mut guard.get_or_insert_with(|| FileState::new(config, hooks));
    state.devices += 1;
    if start_now {
        state.start();
    }
}

/// Starts the session if none runs (a frame window opened).
pub fn start() {
    if let Some(state) = STATE.lock().as_mut() {
        state.start();
    }
}

/// Stops the session and writes its trace (a frame window closed).
pub fn finish() {
    if let Some(state) = STATE.lock().as_mut() {
        state.finish();
    }
}

/// A device is gone; the last one ends the session.
pub fn device_removed() {
    if let Some(state) = STATE.lock().as_mut() {
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
        if let Some(state) = guard.as_mut() {
            state.claim();
        }
    }
}

impl FileState {
    fn new(config: &OutputChoice, hooks: SessionHooks) -> FileState {
        FileState {
            hooks,
            path: trace_path(config),
            held: None,
            session_file: None,
            buffer_kb: config.perfetto_buffer_kb,
            devices: 0,
            said_nothing: false,
        }
    }

    fn start(&mut self) {
        if self.session_file.is_some() {
            // A session runs (it lives in `file_drain`, which reads it).
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
        let opened = File::options().create(true).append(true).open(&file);
        let out = match opened {
            Ok(out) => Output::new(out, file.clone()),
            Err(e) => {
                log::error!(
                    "the Perfetto session's file {} cannot be created ({e}); the session is not recorded",
                    file.display()
                );
                return;
            }
        };
        match TracingSession::in_process() {
            Ok(mut session) => {
                session.setup(&trace_config(self.buffer_kb));
                BATCH_TRACED.store(false, Ordering::Relaxed);
                CLAIM_PENDING.store(self.held.is_none(), Ordering::Relaxed);
                // Returns once the data source started: the devices capture from here on.
                session.start_blocking();
                super::file_drain::start(session, out, self.buffer_kb);
                self.session_file = Some(file);
            }
            Err(e) => {
                log::error!("could not start the in-process Perfetto session ({e})");
                drop(out);
                let _ = std::fs::remove_file(&file);
            }
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
        let file = self.held.as_ref().map_or(staging, |h| h.path.clone());
        super::file_drain::moved_to(&file);
        self.session_file = Some(file);
    }

    /// Stops the session: its on-stop lets every device write what it submitted first, then
    /// the service writes the rest of the trace into the file.
    fn finish(&mut self) {
        if self.session_file.is_none() {
            return;
        }
        // What was submitted so far is written while the ring is still read: while the
        // session stops it is not, and a batch larger than the ring would overwrite itself.
        // (The stop itself waits for the same; it is only done first.)
        (self.hooks.drain)(super::STOP_DRAIN);
        super::file_drain::finish();
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
/// cleared every second.
pub fn trace_config(buffer_kb: u32) -> Vec<u8> {
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
    }
    msg.finalize();
    let mut bytes = vec![0u8; writer.stream_writer().get_written_size()];
    heap.copy_into(&mut bytes);
    bytes
}
