//! A trace output that is slow to take what is written: `GPU_TRACEFILE` is a FIFO whose
//! reader starts draining only seconds after the application began. The application must
//! never wait for the layer's writing: its idle waits return when the GPU is done.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::harness::TempDir;
use utrace_tests::workload;

/// How long the reader leaves the FIFO alone: longer than any bounded wait of the layer's.
const READER_LAG: Duration = Duration::from_secs(3);

/// A FIFO at `dir/name`, and a thread that opens it at once, reads nothing for `lag`, then
/// drains it until the writer is gone and `exited` is set; the thread returns the bytes.
fn lagging_fifo(
    dir: &Path,
    name: &str,
    lag: Duration,
    exited: Arc<AtomicBool>,
) -> (PathBuf, std::thread::JoinHandle<Vec<u8>>) {
    let path = dir.join(name);
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path in the test's own directory.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    // Non-blocking, so that opening does not wait for a writer and reading never hangs the
    // test if the layer never writes.
    let mut fifo = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .expect("the FIFO's read end");
    let reader = std::thread::spawn(move || {
        std::thread::sleep(lag);
        let mut bytes = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            match fifo.read(&mut buf) {
                Ok(0) if exited.load(Ordering::SeqCst) => return bytes,
                Ok(n) => bytes.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("reading the FIFO: {e}"),
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    (path, reader)
}

#[test]
fn idle_waits_do_not_wait_for_a_lagging_reader() {
    let dir = TempDir::new("lagging-reader");
    let exited = Arc::new(AtomicBool::new(false));
    let (fifo, reader) = lagging_fifo(dir.path(), "trace.fifo", READER_LAG, Arc::clone(&exited));
    let run = workload!("idle-waits")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", fifo.to_str().unwrap())
        .run(&dir);
    exited.store(true, Ordering::SeqCst);
    let trace = String::from_utf8(reader.join().expect("the reader")).expect("text");
    assert_clean(&run);
    let waits = &run.report().devices[0].idle_waits_ns;
    assert_eq!(
        waits.len(),
        2,
        "vkDeviceWaitIdle and vkQueueWaitIdle were timed"
    );
    // The GPU is idle at these waits (every submission's fence was waited for): they take
    // microseconds, on a slow machine too; an output that held them would hold them for
    // the layer's 1-2 s graces, ten times this.
    for &ns in waits {
        assert!(
            ns < 200_000_000,
            "an idle wait took {} ms while the trace's reader lagged: {waits:?}",
            ns / 1_000_000
        );
    }
    // Nothing was lost: the reader got every batch once it read.
    let trace = assert_trace_matches(&trace, &run);
    assert_eq!(trace.batches.len(), 300);
    assert_eq!(trace.ends.len(), 1);
    assert_eq!(trace.ends[0].dropped, 0);
}

#[test]
fn a_reader_that_never_reads_costs_the_application_a_bounded_wait() {
    // The FIFO's reader holds it open and never reads: the trace cannot be written, and the
    // application must still finish, told what was lost.
    let dir = TempDir::new("stuck-reader");
    let exited = Arc::new(AtomicBool::new(false));
    let (fifo, reader) = lagging_fifo(
        dir.path(),
        "trace.fifo",
        Duration::from_secs(3600),
        Arc::clone(&exited),
    );
    let started = std::time::Instant::now();
    let run = workload!("idle-waits")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", fifo.to_str().unwrap())
        .run(&dir);
    let took = started.elapsed();
    exited.store(true, Ordering::SeqCst);
    drop(reader);
    assert_clean(&run);
    // The run (a second or two here, twice that on a slow machine) and the layer's bounded
    // drains (1 s at vkDestroyDevice, 1 s at exit); an output that held the application
    // would hold it for as long as the reader never reads (an hour).
    assert!(
        took < Duration::from_secs(15),
        "the application was held {took:?} by an output that takes no data"
    );
    for &ns in &run.report().devices[0].idle_waits_ns {
        assert!(ns < 200_000_000, "an idle wait took {} ms", ns / 1_000_000);
    }
    said_lost_once(&run.stderr);
}

/// The loss is said, once (the drains at the instance's end and at exit each said it).
fn said_lost_once(stderr: &str) {
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("could not be written"))
        .collect();
    assert_eq!(said.len(), 1, "what was lost is said once: {stderr}");
    assert!(said[0].contains("trace.fifo"), "{stderr}");
}

#[test]
fn a_fifo_without_a_reader_is_said_lost_once() {
    let dir = TempDir::new("no-reader");
    let fifo = dir.path().join("trace.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path in the test's own folder.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", fifo.to_str().unwrap())
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    said_lost_once(&run.stderr);
}
