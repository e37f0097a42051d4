//! Moves the in-process session's trace from its ring buffer into its file.
//!
//! The layer reads the session itself (Perfetto's `ReadTrace`) rather than have the service
//! write the file: the service writes at most every 100 ms, so a ring had to hold what the
//! sink writes in that time or come round over stages not yet in the file (a million draws
//! in one batch left 366,000 in a 64 MiB ring written once a second), and a ring that came
//! round stays resident (the 64 MiB ring was half the layer's memory at a million draws).
//! Reading takes the packets out of the ring, so the ring only has to hold what is written
//! between two reads: a traceq thread that handed the session a quarter of the ring (its
//! count is generous: see `render_stages`) since the last read reads it out itself before
//! it writes more, and a thread of this module's reads every [`DRAIN_PERIOD`], so that a
//! process stopped any way leaves a trace that decodes, missing at most that period.
//!
//! Each read is appended to the file as it comes (whole packets); a write that fails (full
//! disk) is cut back to the last whole packet, so the file stays well-formed, what could
//! not be written is counted and said when the session ends, and every sequence starts its
//! state afresh (the lost packets may have interned what later ones name).

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{bounded, RecvTimeoutError, Sender};
use parking_lot::Mutex;
use perfetto_sdk::tracing_session::TracingSession;

/// How often the session is read when no traceq thread reads it: what a killed process
/// can lose.
pub const DRAIN_PERIOD: Duration = Duration::from_millis(100);

/// The file a session's trace goes to, and what could not be written to it.
pub struct Output {
    file: File,
    path: PathBuf,
    /// Bytes in the file (where a failed write is cut back to).
    written: u64,
    /// Bytes that could not be written, and the first error.
    lost: u64,
    error: Option<std::io::Error>,
    /// The last write failed (said once until one succeeds).
    failing: bool,
}

impl Output {
    /// `file`: open for appending, empty.
    pub fn new(file: File, path: PathBuf) -> Output {
        Output {
            file,
            path,
            written: 0,
            lost: 0,
            error: None,
            failing: false,
        }
    }

    fn append(&mut self, data: &[u8]) {
        match self.file.write_all(data) {
            Ok(()) => {
                self.written += data.len() as u64;
                if std::mem::take(&mut self.failing) {
                    log::warn!(
                        "writing the Perfetto trace to {} works again ({} bytes lost so far; the devices send what their stages refer to again)",
                        self.path.display(),
                        self.lost
                    );
                }
            }
            Err(e) => {
                // Part of the packets may have gone in: cut back to the last whole one.
                let _ = self.file.set_len(self.written);
                self.lost += data.len() as u64;
                // What the lost packets interned (stage names, queues, the clock) is sent
                // again: every sequence starts its state afresh at its next slice.
                LOSSES.fetch_add(1, Ordering::Relaxed);
                if !self.failing {
                    self.failing = true;
                    log::error!(
                        "writing the Perfetto trace to {} failed ({e}); what cannot be written is counted",
                        self.path.display()
                    );
                }
                self.error.get_or_insert(e);
            }
        }
    }
}

struct Drain {
    session: TracingSession,
    out: Arc<Mutex<Output>>,
}

/// The running session, sendable: it lives in a static mutex.
struct SendDrain(Drain);
// SAFETY: a TracingSession is a handle to Perfetto's session object, which its C API allows
// to use from any thread; it is only touched under the mutex.
unsafe impl Send for SendDrain {}

static DRAIN: Mutex<Option<SendDrain>> = Mutex::new(None);
/// The reading thread and what stops it.
static TICKER: Mutex<Option<(JoinHandle<()>, Sender<()>)>> = Mutex::new(None);
/// Whether a session is being read (one load per slice when none is).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Bytes handed to the session since it was last read, and how many make a read.
static HANDED: AtomicU64 = AtomicU64::new(0);
static READ_EVERY: AtomicU64 = AtomicU64::new(u64::MAX);
/// Writes that failed, ever: a sink that sees it grow starts its sequence's state afresh.
static LOSSES: AtomicU64 = AtomicU64::new(0);

/// Whether packets were lost since `seen` was last updated (one load when none were):
/// what they interned must be sent again.
pub fn lost_since(seen: &mut u64) -> bool {
    let now = LOSSES.load(Ordering::Relaxed);
    now != std::mem::replace(seen, now)
}

/// The session's file is now at `path` (claimed: see `trace_file::claim`), for messages.
pub fn moved_to(path: &std::path::Path) {
    if let Some(SendDrain(drain)) = DRAIN.lock().as_ref() {
        drain.out.lock().path = path.to_path_buf();
    }
}

/// A session started with a ring of `buffer_kb`; its trace goes to `out`.
pub fn start(session: TracingSession, out: Output, buffer_kb: u32) {
    log::info!(
        "Perfetto session: its {buffer_kb} KiB ring is read into {} every {DRAIN_PERIOD:?} and as it fills",
        out.path.display()
    );
    HANDED.store(0, Ordering::Relaxed);
    READ_EVERY.store(u64::from(buffer_kb) * 1024 / 4, Ordering::Relaxed);
    *DRAIN.lock() = Some(SendDrain(Drain {
        session,
        out: Arc::new(Mutex::new(out)),
    }));
    ACTIVE.store(true, Ordering::Release);
    let (stop_tx, stop_rx) = bounded::<()>(1);
    let ticker = std::thread::Builder::new()
        .name("utrace-pftrace".into())
        .spawn(move || loop {
            match stop_rx.recv_timeout(DRAIN_PERIOD) {
                Err(RecvTimeoutError::Timeout) => read_now(),
                _ => return,
            }
        });
    match ticker {
        Ok(handle) => *TICKER.lock() = Some((handle, stop_tx)),
        Err(e) => log::warn!(
            "no thread to write the Perfetto trace every {DRAIN_PERIOD:?} ({e}); it is written as stages come and when the session ends"
        ),
    }
}

/// The sink handed `bytes` more to the session (once per slice of about 1,000 stages, on
/// a traceq thread): reads the session when a quarter of the ring may be waiting.
pub fn handed(bytes: u64) {
    if !ACTIVE.load(Ordering::Acquire) {
        return;
    }
    if HANDED.fetch_add(bytes, Ordering::Relaxed) + bytes >= READ_EVERY.load(Ordering::Relaxed) {
        read_now();
    }
}

/// Reads what the session holds into its file.
fn read_now() {
    let mut guard = DRAIN.lock();
    if let Some(SendDrain(drain)) = guard.as_mut() {
        HANDED.store(0, Ordering::Relaxed);
        read(&mut drain.session, &drain.out);
    }
}

fn read(session: &mut TracingSession, out: &Arc<Mutex<Output>>) {
    let out = Arc::clone(out);
    session.read_trace_blocking(move |data, _more| out.lock().append(data));
}

/// Ends the session: stops it (the devices write what they submitted), then writes the rest
/// of its trace; says what could not be written.
pub fn finish() {
    ACTIVE.store(false, Ordering::Release);
    if let Some((handle, stop)) = TICKER.lock().take() {
        let _ = stop.send(());
        let _ = handle.join();
    }
    // Out of the mutex: while the session stops, the traceq threads write their last
    // stages without reading it (the ring holds them; it is read whole below).
    let Some(SendDrain(mut drain)) = DRAIN.lock().take() else {
        return;
    };
    drain.session.stop_blocking();
    read(&mut drain.session, &drain.out);
    drop(drain.session);
    let out = drain.out.lock();
    if let Some(e) = &out.error {
        log::error!(
            "{} bytes of the Perfetto trace could not be written to {} ({e}); the file holds the rest",
            out.lost,
            out.path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write that fails leaves the file as it was before it (whole packets only), counts
    /// what it lost, and later writes that succeed go on from there.
    #[test]
    fn a_failed_write_is_cut_back_and_counted() {
        let path = std::env::temp_dir().join(format!("utrace-drain-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let file = File::options()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        let mut out = Output::new(file, path.clone());
        out.append(b"first");
        // The same file, read-only: every write fails.
        let writable = std::mem::replace(&mut out.file, File::open(&path).unwrap());
        let mut seen = LOSSES.load(Ordering::Relaxed);
        assert!(!lost_since(&mut seen));
        out.append(b"lost");
        assert_eq!((out.written, out.lost), (5, 4));
        assert!(out.error.is_some() && out.failing);
        assert!(lost_since(&mut seen), "the sinks are told to intern again");
        assert!(!lost_since(&mut seen), "once");
        out.file = writable;
        out.append(b"second");
        assert!(!out.failing);
        assert_eq!(std::fs::read(&path).unwrap(), b"firstsecond");
        let _ = std::fs::remove_file(&path);
    }
}
