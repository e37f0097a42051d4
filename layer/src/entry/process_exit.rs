//! What happens to the trace when the process ends with devices alive: every device gets its
//! completed batches written and its trace closed.
//!
//! Two ways in. `exit()` first runs the handlers registered with `atexit` (and C++ static
//! destructors) in reverse order of registration, then each library's `.fini_array`. The
//! validation layer's and the driver's static destructors are registered when they are
//! loaded, before the application has a device; a handler registered after the first device
//! exists therefore runs before them, while the traceq threads may still be inside a call
//! into those libraries (waiting for a batch). The `.fini_array` entry covers the layer
//! being unloaded (`dlclose`) and a failed registration; whichever runs second finds
//! nothing left to do.
//!
//! A child made by `fork()` inherits the handler but none of the threads it would wait for
//! (traceq, the writers, Perfetto's), and the trace files are its parent's: in any process
//! but the one that registered it, the handler does nothing.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;

/// The process that registered the exit handler (0 before).
static OWNER: AtomicU32 = AtomicU32::new(0);

/// Registers the exit handler; called once a device exists.
pub fn register() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        OWNER.store(std::process::id(), Ordering::Relaxed);
        // SAFETY: `on_exit` is a plain `extern "C" fn()` that never unwinds.
        if unsafe { libc::atexit(on_exit) } != 0 {
            log::warn!("could not register the exit handler; traces are closed at unload");
        }
    });
}

extern "C" fn on_exit() {
    close_all();
}

extern "C" fn on_unload() {
    close_all();
}

/// How long exit waits, in all, for the text outputs to write what they hold.
const OUTPUT_DRAIN: std::time::Duration = std::time::Duration::from_secs(1);
/// How long exit waits for a capture in progress, ended by the traces' close, to say so to
/// its client (its file's end is written within 5 s on a full disk, far sooner otherwise).
const CAPTURE_ANSWER: std::time::Duration = std::time::Duration::from_secs(6);

/// Writes and closes every live device's trace (idempotent: a stopped device is skipped),
/// then waits (bounded) for the text outputs, which say what they could not write.
fn close_all() {
    if !in_owner_process() {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        for device in crate::hooks::device_record::all_devices() {
            if let Some(tracer) = device.tracer.as_ref() {
                tracer.shutdown(true);
            }
        }
        // A capture's client hears `ended` from the process, not only the connection's end.
        if !crate::control::captures_answered(CAPTURE_ANSWER) {
            log::warn!("a capture in progress could not be answered before the exit");
        }
        crate::sink::destinations::drain_all(OUTPUT_DRAIN);
        crate::control::remove_socket();
    });
}

// SAFETY (link section): `.fini_array` entries are plain `extern "C" fn()` pointers that the
// dynamic linker calls at exit and at dlclose; `on_unload` never unwinds.
#[used]
#[link_section = ".fini_array"]
static ON_UNLOAD: extern "C" fn() = on_unload;

/// Whether this is the process whose devices the layer traces, not a child forked from it
/// (true while no device ever existed: there is nothing to close then anyway).
fn in_owner_process() -> bool {
    let owner = OWNER.load(Ordering::Relaxed);
    owner == 0 || owner == std::process::id()
}
