//! `GPU_TRACE_FORMAT=perfetto`: an in-process tracing session that enables the data source
//! from the first traced device on (or from the first frame of a `GPU_TRACE_FRAMES`
//! window) and writes its trace into `GPU_TRACEFILE` as it goes: Perfetto's service flushes
//! the data source and appends what it holds to the file every [`FILE_WRITE_PERIOD_MS`], so a
//! process stopped any way (Ctrl-C, SIGTERM, `kill -9`) leaves a trace that decodes, missing
//! at most the last period. The session ends when the window closes, the last device is
//! destroyed or the process exits with devices alive.
//!
//! The service creates the file exclusively (`O_CREAT | O_EXCL`: it follows no link and
//! truncates nothing); an existing file at the configured path is replaced first, as a text
//! trace's is. A later session of the same process (devices created again) writes to a
//! file of its own beside it, appended to the trace when it ends: concatenated traces are
//! one trace.

use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use perfetto_sdk::heap_buffer::HeapBuffer;
use perfetto_sdk::pb_msg::{PbMsg, PbMsgWriter};
use perfetto_sdk::protos::config::data_source_config::DataSourceConfig;
use perfetto_sdk::protos::config::trace_config::{
    BufferConfigFillPolicy, TraceConfig, TraceConfigBufferConfig, TraceConfigDataSource,
    TraceConfigIncrementalStateConfig, TraceConfigWriteFlushMode,
};
use perfetto_sdk::tracing_session::TracingSession;

use super::super::OutputChoice;
use crate::config::{expand_path, Destination, DEFAULT_PERFETTO_FILE};

/// Interned data is re-sent this often, so that a ring buffer that wrapped still holds
/// the specifications its remaining events refer to.
const CLEAR_PERIOD_MS: u32 = 1000;
/// How often the service writes what it holds into the file (after flushing the data
/// source): what a killed process can lose.
pub const FILE_WRITE_PERIOD_MS: u32 = 1000;

struct FileState {
    session: Option<TracingSession>,
    /// The trace file (the configured path, or a fallback when it cannot be created).
    path: PathBuf,
    /// Where the running session writes: `path` for the first session of the process, a
    /// file beside it for a later one (appended to `path` when it ends).
    session_file: Option<PathBuf>,
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
        }
    }
}

impl FileState {
    fn new(config: &OutputChoice) -> FileState {
        let configured = trace_path(config);
        // Checked now, so that a path that cannot be written is reported while the
        // application starts, not when its trace is lost.
        let path = match claim(&configured, true) {
            Ok(()) => configured,
            Err(e) => {
                let fallback = fallback_path();
                log::error!(
                    "cannot create the Perfetto trace {} ({e}); writing it to {} instead",
                    configured.display(),
                    fallback.display()
                );
                fallback
            }
        };
        FileState {
            session: None,
            path,
            session_file: None,
            buffer_kb: config.perfetto_buffer_kb,
            devices: 0,
            written: false,
        }
    }

    fn start(&mut self) {
        if self.session.is_some() {
            return;
        }
        let file = if self.written {
            match later_session_file(&self.path) {
                Some(file) => file,
                None => {
                    log::error!(
                        "no file beside {} for another Perfetto session; this one is not recorded",
                        self.path.display()
                    );
                    return;
                }
            }
        } else {
            // Claimed again now: a frame window may start the session long after the
            // device checked the path, and the service would fail silently on a file that
            // appeared meanwhile.
            if let Err(e) = claim(&self.path, true) {
                log::error!(
                    "cannot create the Perfetto trace {} ({e}); this session is not recorded",
                    self.path.display()
                );
                return;
            }
            self.path.clone()
        };
        match TracingSession::in_process() {
            Ok(mut session) => {
                session.setup(&trace_config(self.buffer_kb, Some(&file)));
                // Returns once the data source started: the devices capture from here on.
                session.start_blocking();
                self.session = Some(session);
                self.session_file = Some(file);
            }
            Err(e) => log::error!("could not start the in-process Perfetto session ({e})"),
        }
    }

    /// Stops the session: its on-stop lets every device write what it submitted first, then
    /// the service writes the rest of the trace into the file.
    fn finish(&mut self) {
        let Some(mut session) = self.session.take() else {
            return;
        };
        session.stop_blocking();
        drop(session);
        let file = self
            .session_file
            .take()
            .unwrap_or_else(|| self.path.clone());
        if file != self.path {
            if let Err(e) = append_and_remove(&file, &self.path) {
                log::error!(
                    "appending the Perfetto session {} to {} failed ({e}); it stays in {}",
                    file.display(),
                    self.path.display(),
                    file.display()
                );
            }
        }
        let size = std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        log::info!(
            "Perfetto trace written to {} ({size} bytes)",
            self.path.display()
        );
        self.written = true;
    }
}

/// Makes sure `path` can be created exclusively by the service: an existing file there is
/// removed (`replace`; a link is removed itself, never followed), then a probe is created
/// with `O_CREAT | O_EXCL` and removed again.
fn claim(path: &Path, replace: bool) -> std::io::Result<()> {
    if replace {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => {
                return Err(std::io::Error::other("it is a directory"));
            }
            Ok(_) => std::fs::remove_file(path)?,
            Err(_) => {}
        }
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    std::fs::remove_file(path)
}

/// `$TMPDIR/utrace-<pid>.pftrace`, or `utrace-<pid>-N.pftrace` for the first N that is free:
/// a shared folder may hold anything, so nothing there is replaced or followed.
fn fallback_path() -> PathBuf {
    fallback_in(&std::env::temp_dir(), std::process::id())
}

fn fallback_in(dir: &Path, pid: u32) -> PathBuf {
    (0..1000)
        .map(|n| match n {
            0 => dir.join(format!("utrace-{pid}.pftrace")),
            n => dir.join(format!("utrace-{pid}-{n}.pftrace")),
        })
        .find(|candidate| claim(candidate, false).is_ok())
        .unwrap_or_else(|| dir.join(format!("utrace-{pid}.pftrace")))
}

/// A free file beside `path` for a later session of the process.
fn later_session_file(path: &Path) -> Option<PathBuf> {
    (1..1000)
        .map(|n| {
            let mut name = path.as_os_str().to_owned();
            name.push(format!(".session-{n}"));
            PathBuf::from(name)
        })
        .find(|candidate| claim(candidate, false).is_ok())
}

/// Appends the trace in `from` to `to` (concatenated traces are one trace) and removes it.
fn append_and_remove(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut source = std::fs::File::open(from)?;
    let mut target = std::fs::OpenOptions::new().append(true).open(to)?;
    std::io::copy(&mut source, &mut target)?;
    std::fs::remove_file(from)
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
            cfg.set_write_flush_mode(TraceConfigWriteFlushMode::WriteFlushEnabled);
        }
    }
    msg.finalize();
    let mut bytes = vec![0u8; writer.stream_writer().get_written_size()];
    heap.copy_into(&mut bytes);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary folder, removed when dropped.
    struct Folder(PathBuf);

    impl Folder {
        fn new(name: &str) -> Folder {
            let dir =
                std::env::temp_dir().join(format!("utrace-unit-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Folder(dir)
        }
    }

    impl Drop for Folder {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_fallback_follows_no_planted_link_and_replaces_nothing() {
        let folder = Folder::new("fallback");
        let victim = folder.0.join("victim");
        std::fs::write(&victim, "someone else's file").unwrap();
        // Planted where the trace of pid 4242 would go, and a file at the next name.
        std::os::unix::fs::symlink(&victim, folder.0.join("utrace-4242.pftrace")).unwrap();
        std::fs::write(folder.0.join("utrace-4242-1.pftrace"), "taken").unwrap();
        let chosen = fallback_in(&folder.0, 4242);
        assert_eq!(chosen, folder.0.join("utrace-4242-2.pftrace"));
        assert!(
            !chosen.exists(),
            "left for the service to create exclusively"
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "someone else's file"
        );
        assert_eq!(
            std::fs::read_to_string(folder.0.join("utrace-4242-1.pftrace")).unwrap(),
            "taken"
        );
    }

    #[test]
    fn the_configured_path_is_replaced_by_removing_a_link_not_its_target() {
        let folder = Folder::new("configured");
        let victim = folder.0.join("victim");
        std::fs::write(&victim, "kept").unwrap();
        let path = folder.0.join("gpu.pftrace");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        claim(&path, true).unwrap();
        assert!(
            std::fs::symlink_metadata(&path).is_err(),
            "the link is gone"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "kept");
        // A folder is not a file to replace.
        assert!(claim(&folder.0, true).is_err());
    }
}
