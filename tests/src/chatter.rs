//! `utrace-workload --chatter`: the workload prints a line of its own on stdout after each
//! submission, through the C library's `stdout` stream as C applications do (fully buffered
//! into a pipe), so the tests can check that the layer's trace and the application's lines
//! stay whole when both go to stdout.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static ON: AtomicBool = AtomicBool::new(false);
static LINES: AtomicU64 = AtomicU64::new(0);

/// The prefix of every chatter line.
pub const PREFIX: &str = "workload says: submission ";

extern "C" {
    /// glibc's `stdout` (`FILE *`), which the `libc` crate does not declare.
    static mut stdout: *mut libc::FILE;
}

pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

/// After a submission: one line, `workload says: submission N done, ...`, long enough that
/// the stream's buffer fills mid-line now and then.
pub fn after_submission() {
    if !ON.load(Ordering::Relaxed) {
        return;
    }
    let n = LINES.fetch_add(1, Ordering::Relaxed) + 1;
    let line = std::ffi::CString::new(format!(
        "{PREFIX}{n} done, and this line is long enough to straddle buffer boundaries\n"
    ))
    .expect("no NUL");
    // SAFETY: `stdout` is the C library's stream, valid for the process's life; `line` is
    // NUL-terminated. No flush: the stream flushes when its buffer is full, as in C programs.
    unsafe { libc::fputs(line.as_ptr(), stdout) };
}
