//! `GPU_TRACE_FORMAT=perfetto`: an in-process tracing session that enables the data source
//! from the first traced device on (or from the first frame of a `GPU_TRACE_FRAMES`
//! window), and whose complete trace is written to `GPU_TRACEFILE` when the window closes,
//! the last device is destroyed or the process exits with devices alive. A later session
//! (devices created again) is appended: concatenated traces are one valid trace.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use perfetto_sdk::heap_buffer::HeapBuffer;
use perfetto_sdk::pb_msg::{PbMsg, PbMsgWriter};
use perfetto_sdk::protos::config::data_source_config::DataSourceConfig;
use perfetto_sdk::protos::config::trace_config::{
    BufferConfigFillPolicy, TraceConfig, TraceConfigBufferConfig, TraceConfigDataSource,
    TraceConfigIncrementalStateConfig,
};
use perfetto_sdk::tracing_session::TracingSession;

use crate::config::{expand_path, Config, Destination, DEFAULT_PERFETTO_FILE};

/// Interned data is re-sent this often, so that a ring buffer that wrapped still holds
/// the specifications its remaining events refer to.
const CLEAR_PERIOD_MS: u32 = 1000;

struct FileState {
    session: Option<TracingSession>,
    path: PathBuf,
    buffer_kb: u32,
    /// Devices feeding the file.
    devices: u32,
    /// A session was already written by this process: later ones append.
    written: bool,
}

/// The state, sendable: it lives in a static mutex.
struct SendSession(FileState);
// SAFETY: a TracingSession is a handle to Perfetto's session object, which its C API allows
// to use from any thread; it is only touched under the mutex.
unsafe impl Send for SendSession {}

static STATE: Mutex<Option<SendSession>> = Mutex::new(None);

/// A device writes to the file; the session starts now unless a frame window starts it.
pub fn device_added(config: &Config, start_now: bool) {
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
        }
    }
}

impl FileState {
    fn new(config: &Config) -> FileState {
        let mut path = trace_path(config);
        // Created (empty) now, so that a path that cannot be written is reported while the
        // application starts, not when its trace is lost.
        if let Err(e) = std::fs::File::create(&path) {
            let fallback = std::env::temp_dir().join(
                expand_path(DEFAULT_PERFETTO_FILE, std::process::id(), 0)
                    .file_name()
                    .unwrap_or_default(),
            );
            log::error!(
                "cannot create the Perfetto trace {} ({e}); writing it to {} instead",
                path.display(),
                fallback.display()
            );
            path = fallback;
        }
        FileState {
            session: None,
            path,
            buffer_kb: config.perfetto_buffer_kb,
            devices: 0,
            written: false,
        }
    }

    fn start(&mut self) {
        if self.session.is_some() {
            return;
        }
        match TracingSession::in_process() {
            Ok(mut session) => {
                session.setup(&trace_config(self.buffer_kb));
                // Returns once the data source started: the devices capture from here on.
                session.start_blocking();
                self.session = Some(session);
            }
            Err(e) => log::error!("could not start the in-process Perfetto session ({e})"),
        }
    }

    /// Stops the session (its on-stop lets every device write what it submitted first),
    /// reads the whole trace and writes it.
    fn finish(&mut self) {
        let Some(mut session) = self.session.take() else {
            return;
        };
        session.stop_blocking();
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&bytes);
        session.read_trace_blocking(move |data, _last| sink.lock().extend_from_slice(data));
        drop(session);
        let bytes = std::mem::take(&mut *bytes.lock());
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(self.written)
            .write(true)
            .truncate(!self.written)
            .open(&self.path)
            .and_then(|mut f| f.write_all(&bytes));
        match written {
            Ok(()) => log::info!(
                "Perfetto trace written to {} ({} bytes)",
                self.path.display(),
                bytes.len()
            ),
            Err(e) => log::error!(
                "writing the Perfetto trace {} failed ({e}); {} bytes lost",
                self.path.display(),
                bytes.len()
            ),
        }
        self.written = true;
    }
}

fn trace_path(config: &Config) -> PathBuf {
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
