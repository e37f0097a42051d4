//! Whether a device is still traced. An internal error (a failed allocation, a lost device)
//! stops instrumenting new command buffers, logged once; command buffers already
//! instrumented keep being re-armed so that they stay valid.

use std::sync::atomic::{AtomicBool, Ordering};

use ash::vk;

pub struct Health {
    device_index: u32,
    recording: AtomicBool,
    faulted: AtomicBool,
}

impl Health {
    pub fn new(device_index: u32) -> Health {
        Health {
            device_index,
            recording: AtomicBool::new(true),
            faulted: AtomicBool::new(false),
        }
    }

    /// Whether new command buffers get tracepoints.
    pub fn recording(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }

    /// Stops instrumenting; the first fault of the device is logged.
    pub fn fault(&self, what: &str, error: vk::Result) {
        self.stop(|| format!("{what} failed ({error})"));
    }

    /// An internal error (a panic in the layer's part of `what`): as a fault.
    pub fn internal_error(&self, what: &str, message: &str) {
        self.stop(|| format!("internal error in {what}: {message}"));
    }

    fn stop(&self, why: impl FnOnce() -> String) {
        self.recording.store(false, Ordering::Relaxed);
        if !self.faulted.swap(true, Ordering::Relaxed) {
            log::error!(
                "{}; tracing stops for device {}: no recording is instrumented from now on, command buffers recorded before are still timed until recorded again (the application goes on)",
                why(),
                self.device_index
            );
        }
    }
}
