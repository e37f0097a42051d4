//! Keeps the traceq threads from writing stages faster than the in-process session's
//! service moves them into its file.
//!
//! The session's buffer is a ring: what the service has not yet written to the file when
//! the ring comes round again is overwritten, and nothing says so (a million draws in one
//! batch left 366,000 in a 64 MiB ring written to the file every second). So the sink
//! counts the bytes it hands to the session, the file's size says how many the service
//! wrote, and a thread whose bytes not yet in the file exceed half the ring waits
//! until the service's next write (the session says how often it writes) takes them. The wait is the traceq thread's, never the application's; it is bounded
//! ([`STALL`]), after which the thread goes on and says once that stages may be lost.
//!
//! The count is generous (each stage's bytes and more than the framing and the fields the
//! service adds, and each slice's state packets), so that it never says fewer bytes are
//! waiting than there are; its excess grows with the trace, so when the count says too
//! many wait but the file has grown by no more than a few of the service's own small
//! packets in two of its writes, the service has written all it had: the count starts
//! again from the file's size, and from then on is scaled by what the file took of it
//! (plus 3%), so that its excess grows slowly.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// The longest a thread waits for the file to take its bytes, per wait.
const STALL: Duration = Duration::from_secs(2);
/// How often a waiting thread looks at the file's size.
const POLL: Duration = Duration::from_millis(1);
/// Growth that is only the service's own packets (it writes a few dozen bytes at each
/// write even when the sink wrote nothing).
const IDLE_GROWTH: u64 = 16 * 1024;
/// Counts this large at least tell the file's share of them (for the scale).
const SCALE_SAMPLE: u64 = 1 << 20;

struct Paced {
    /// The file the session writes into, opened for its size only.
    file: File,
    /// Bytes the sink may hand over beyond what the file holds.
    ahead_limit: u64,
    /// The count and the file's size when the count last started again.
    synced: (u64, u64),
    /// What the file takes of a counted byte, in thousandths (at most 1000).
    scale: u64,
    /// A file that has not grown for this long holds all the service had: two of its
    /// writes.
    still: Duration,
}

static PACED: Mutex<Option<Paced>> = Mutex::new(None);
/// Whether a session's file is paced (one load per slice when it is not).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Bytes handed to the running session so far.
static HANDED: AtomicU64 = AtomicU64::new(0);
/// "Stages may be lost" was said.
static SAID_STALL: AtomicBool = AtomicBool::new(false);

/// A session started writing into `file` with a ring of `buffer_kb`, which its service
/// writes out every `write_period`: bytes are counted from here.
pub fn start(file: File, buffer_kb: u32, write_period: Duration) {
    let ahead_limit = u64::from(buffer_kb) * 1024 / 2;
    HANDED.store(0, Ordering::Relaxed);
    *PACED.lock() = Some(Paced {
        file,
        ahead_limit,
        synced: (0, 0),
        scale: 1000,
        still: 2 * write_period,
    });
    ACTIVE.store(true, Ordering::Release);
}

/// The session stopped: nothing is paced until the next starts.
pub fn stop() {
    ACTIVE.store(false, Ordering::Release);
    if let Some(paced) = PACED.lock().take() {
        let in_file = paced.file.metadata().map_or(0, |m| m.len());
        log::debug!(
            "Perfetto file pacing: {} bytes counted, {in_file} in the file",
            HANDED.load(Ordering::Relaxed)
        );
    }
}

/// The sink handed `bytes` more to the session; waits while too many are not yet in the
/// file. Called once per slice of stages (about 1,000), on a traceq thread.
pub fn handed(bytes: u64) {
    if !ACTIVE.load(Ordering::Acquire) {
        return;
    }
    let handed = HANDED.fetch_add(bytes, Ordering::Relaxed) + bytes;
    let started = Instant::now();
    // The file's size at a mark, and when: growth since then tells whether it still grows.
    let mut mark: Option<(u64, Instant)> = None;
    loop {
        let mut guard = PACED.lock();
        let Some(paced) = guard.as_mut() else {
            return;
        };
        let Ok(meta) = paced.file.metadata() else {
            return;
        };
        let in_file = meta.len();
        let (counted, file_then) = paced.synced;
        let since = handed.saturating_sub(counted);
        let taken = in_file.saturating_sub(file_then);
        let waiting = (since * paced.scale / 1000).saturating_sub(taken);
        if waiting <= paced.ahead_limit {
            return;
        }
        match mark {
            Some((size, at)) if at.elapsed() >= paced.still => {
                if in_file.saturating_sub(size) <= IDLE_GROWTH {
                    // The service wrote all it had: what the count says beyond is excess.
                    if since >= SCALE_SAMPLE {
                        // Never below 0.6: were the count then exact, what waits would
                        // still be under 0.5 / 0.6 of the ring.
                        paced.scale = (taken * 1030 / since).clamp(600, 1000);
                    }
                    paced.synced = (handed, in_file);
                    return;
                }
                mark = Some((in_file, Instant::now()));
            }
            Some(_) => {}
            None => mark = Some((in_file, Instant::now())),
        }
        drop(guard);
        if started.elapsed() >= STALL {
            if !SAID_STALL.swap(true, Ordering::Relaxed) {
                log::warn!(
                    "the Perfetto session's file has not taken the stages written {STALL:?} ago; later stages may overwrite some not yet in the file"
                );
            }
            return;
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_writer_waits_until_the_file_holds_all_but_half_the_ring() {
        let path = std::env::temp_dir().join(format!("utrace-pace-{}", std::process::id()));
        let mut writer = File::create(&path).unwrap();
        let period = Duration::from_millis(100);
        let still = 2 * period;
        start(File::open(&path).unwrap(), 4, period);
        // Half of a 4 KiB ring may be ahead of the file: no wait.
        let t = Instant::now();
        handed(2048);
        assert!(t.elapsed() < Duration::from_millis(500));
        // 3 KiB ahead: waits until the file grows (the "service" writes 50 ms later).
        let service = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            writer.write_all(&[0; 1536]).unwrap();
        });
        let t = Instant::now();
        handed(1024);
        let waited = t.elapsed();
        service.join().unwrap();
        assert!(waited >= Duration::from_millis(40), "{waited:?}");
        assert!(waited < STALL, "{waited:?}");
        // A count beyond what the file will ever get (its excess): once the file has not
        // grown for two of the service's writes, the count starts again from it.
        let t = Instant::now();
        handed(8192);
        let waited = t.elapsed();
        assert!(waited >= still && waited < STALL, "{waited:?}");
        let t = Instant::now();
        handed(512);
        assert!(t.elapsed() < still, "synced: no wait");
        stop();
        // Not paced once stopped.
        let t = Instant::now();
        handed(1 << 20);
        assert!(t.elapsed() < Duration::from_millis(500));
        let _ = std::fs::remove_file(&path);
    }
}
