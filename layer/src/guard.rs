//! The layer's panic boundary: its own work runs inside [`guarded`] (or a device's
//! `DeviceTracer::guarded`), so that no panic crosses the FFI boundary and a fault in the
//! layer never keeps a call from reaching the driver.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs `f`; a panic comes back as its message.
#[inline]
pub fn catch<R>(what: &str, f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(|| {
        inject(what);
        f()
    }))
    .map_err(|panic| {
        panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into())
    })
}

/// Runs the layer's own part of a call that no traced device owns (instance creation, the
/// set-up of a device). A panic is turned into `None` (the caller then behaves as if tracing
/// were off for this call) and the first one of the process is logged.
#[inline]
pub fn guarded<R>(what: &str, f: impl FnOnce() -> R) -> Option<R> {
    static LOGGED: AtomicBool = AtomicBool::new(false);
    match catch(what, f) {
        Ok(r) => Some(r),
        Err(msg) => {
            if !LOGGED.swap(true, Ordering::Relaxed) {
                log::error!(
                    "internal error in {what}: {msg}; the call goes on untraced (later internal errors are not reported)"
                );
            }
            None
        }
    }
}

/// Debug builds only: `UTRACE_DEBUG_PANIC=<what>` makes the guarded part named `what` panic,
/// so that tests can see what the layer does with its own faults.
#[inline(always)]
fn inject(what: &str) {
    #[cfg(debug_assertions)]
    {
        static WHERE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        if WHERE
            .get_or_init(|| std::env::var("UTRACE_DEBUG_PANIC").ok())
            .as_deref()
            == Some(what)
        {
            panic!("injected by UTRACE_DEBUG_PANIC");
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = what;
}
