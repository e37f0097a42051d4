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
        self.recording.store(false, Ordering::Relaxed);
        if !self.faulted.swap(true, Ordering::Relaxed) {
            log::error!(
                "{what} failed ({error}); tracing stops for device {}",
                self.device_index
            );
        }
    }
}
