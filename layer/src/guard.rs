//! The layer's panic boundary: its own work runs inside [`guarded`], so that no panic crosses
//! the FFI boundary and a fault in the layer never keeps a call from reaching the driver.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the layer's own part of a hook. A panic is logged (with the hook's name) and turned
/// into `None`; the caller then behaves as if tracing were off for this call.
#[inline]
pub fn guarded<R>(what: &str, f: impl FnOnce() -> R) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            log::error!("internal error in {what}: {msg}; the call goes on untraced");
            None
        }
    }
}
