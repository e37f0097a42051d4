//! `GPU_TRACE_FORMAT=perfetto`: an in-process tracing session that enables the data source
//! from the first traced device on, and whose complete trace is written to `GPU_TRACEFILE`
//! when the last device is destroyed (or the process exits with devices alive). A process
//! that creates devices again later starts a new session and appends it: concatenated
//! traces are one valid trace.

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
    /// Devices feeding the current session.
    devices: u32,
    /// A session was already written by this process: later ones append.
    written: bool,
}

// SAFETY (Send): a TracingSession is a handle to Perfetto's session object, which its C API
// allows to use from any thread; it is only touched under the mutex.
struct SendSession(FileState);
unsafe impl Send for SendSession {}

static STATE: Mutex<Option<SendSession>> = Mutex::new(None);

pub fn device_added(config: &Config) {
    let mut state = STATE.lock();
    let state = &mut state
        .get_or_insert_with(|| {
            SendSession(FileState {
                session: None,
                path: trace_path(config),
                devices: 0,
                written: false,
            })
        })
        .0;
    state.devices += 1;
    if state.session.is_some() {
        return;
    }
    if !state.written {
        // Created (empty) now, so that a path that cannot be written is reported while the
        // application starts, not when its trace is lost.
        if let Err(e) = std::fs::File::create(&state.path) {
            let fallback = std::env::temp_dir().join(
                expand_path(DEFAULT_PERFETTO_FILE, std::process::id(), 0)
                    .file_name()
                    .unwrap_or_default(),
            );
            log::error!(
                "cannot create the Perfetto trace {} ({e}); writing it to {} instead",
                state.path.display(),
                fallback.display()
            );
            state.path = fallback;
        }
    }
    match TracingSession::in_process() {
        Ok(mut session) => {
            session.setup(&trace_config(config.perfetto_buffer_kb));
            // Returns once the data source started: the devices capture from here on.
            session.start_blocking();
            state.session = Some(session);
        }
        Err(e) => log::error!("could not start the in-process Perfetto session ({e})"),
    }
}

pub fn device_removed() {
    let mut guard = STATE.lock();
    let Some(SendSession(state)) = guard.as_mut() else {
        return;
    };
    state.devices = state.devices.saturating_sub(1);
    if state.devices > 0 {
        return;
    }
    let Some(mut session) = state.session.take() else {
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
        .append(state.written)
        .write(true)
        .truncate(!state.written)
        .open(&state.path)
        .and_then(|mut f| f.write_all(&bytes));
    match written {
        Ok(()) => log::info!(
            "Perfetto trace written to {} ({} bytes)",
            state.path.display(),
            bytes.len()
        ),
        Err(e) => log::error!(
            "writing the Perfetto trace {} failed ({e}); {} bytes lost",
            state.path.display(),
            bytes.len()
        ),
    }
    state.written = true;
}

fn trace_path(config: &Config) -> PathBuf {
    let template = match &config.destination {
        Destination::File(t) => t.as_str(),
        Destination::Stdout => DEFAULT_PERFETTO_FILE,
    };
    // One file for all devices: `%i` is 0.
    expand_path(template, std::process::id(), 0)
}

/// A trace config with one ring buffer and utrace's data source.
fn trace_config(buffer_kb: u32) -> Vec<u8> {
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
