//! What a device's outputs are told of its life (a Perfetto session): created, the frame
//! window opened and closed, gone; each said once.

use std::sync::atomic::{AtomicBool, Ordering};

use super::capture_gates::FrameEnd;
use super::sink_interface::Lifecycle;

pub struct DeviceLife {
    /// Told of the device's life and of the frame window (a Perfetto session).
    lifecycle: Option<Box<dyn Lifecycle>>,
    /// The lifecycle has not yet been told that the device is gone.
    not_yet_gone: AtomicBool,
}

impl DeviceLife {
    /// The device was created: its outputs are told now.
    pub fn created(lifecycle: Option<Box<dyn Lifecycle>>) -> DeviceLife {
        if let Some(lifecycle) = &lifecycle {
            lifecycle.device_created();
        }
        DeviceLife {
            not_yet_gone: AtomicBool::new(lifecycle.is_some()),
            lifecycle,
        }
    }

    /// Frame `frame` of device number `index` ended: the window it opened or closed.
    pub fn frame_ended(&self, index: u32, frame: u32, end: &FrameEnd) {
        let Some(lifecycle) = &self.lifecycle else {
            return;
        };
        if end.closed {
            log::info!("device {index}: frame {frame} closes the GPU_TRACE_FRAMES window");
            lifecycle.window_closed();
        }
        if end.opened {
            log::info!(
                "device {index}: frame {} opens the GPU_TRACE_FRAMES window",
                frame + 1
            );
            lifecycle.window_opened();
        }
    }

    /// The device is going and its traceq thread wrote everything it had (said once).
    pub fn gone(&self) {
        if let (Some(lifecycle), true) = (
            &self.lifecycle,
            self.not_yet_gone.swap(false, Ordering::Relaxed),
        ) {
            // Everything this device wrote is in the session; the last device ends it.
            lifecycle.device_gone();
        }
    }
}
