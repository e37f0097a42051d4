//! When the trace is written: a capture is active or not. Command buffers recorded while a
//! capture is active (or all of them with `GPU_TRACE_INSTRUMENT=1`) get tracepoints;
//! batches submitted while it is active are written. `GPU_TRACE_FRAMES=FIRST-LAST` starts a
//! capture when frame FIRST begins and stops it when frame LAST ends, through
//! [`Capture::start`] and [`Capture::stop`]: the path a tracing session's start and stop take.

use std::sync::atomic::{AtomicBool, Ordering};

pub struct Capture {
    active: AtomicBool,
    /// Instrument command buffers even while no capture is active.
    instrument_always: bool,
    /// Frames to capture, inclusive.
    window: Option<(u32, u32)>,
}

/// What the end of a frame does to the capture.
#[derive(Debug, PartialEq, Eq)]
pub struct FrameEnd {
    /// The frame that ended was captured (its END OF FRAME is written).
    pub captured: bool,
}

impl Capture {
    pub fn new(window: Option<(u32, u32)>, instrument_always: bool) -> Capture {
        Capture {
            // Without a window everything is captured from the start; with one, frame 0 is
            // captured when the window starts there.
            active: AtomicBool::new(window.is_none_or(|(first, _)| first == 0)),
            instrument_always,
            window,
        }
    }

    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Whether a command buffer recorded now gets tracepoints.
    pub fn instrumenting(&self) -> bool {
        self.instrument_always || self.active()
    }

    pub fn start(&self) {
        self.active.store(true, Ordering::Relaxed);
    }

    pub fn stop(&self) {
        self.active.store(false, Ordering::Relaxed);
    }

    /// Frame `frame` ended (at `vkQueuePresentKHR`): the window's last frame stops the
    /// capture, the frame before its first starts it.
    pub fn end_frame(&self, frame: u32) -> FrameEnd {
        let captured = self.active();
        if let Some((first, last)) = self.window {
            if frame == last {
                self.stop();
            }
            if frame + 1 == first {
                self.start();
            }
        }
        FrameEnd { captured }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_captures_exactly_its_frames() {
        let c = Capture::new(Some((3, 5)), false);
        let mut captured = Vec::new();
        for frame in 0..10 {
            // What a command buffer recorded during `frame` would get.
            if c.instrumenting() {
                captured.push(frame);
            }
            assert!(c.end_frame(frame).captured == captured.contains(&frame));
        }
        assert_eq!(captured, vec![3, 4, 5]);
    }

    #[test]
    fn without_a_window_everything_is_captured_and_instrument_means_always() {
        let c = Capture::new(None, false);
        assert!(c.active() && c.end_frame(0).captured && c.active());
        let c = Capture::new(Some((2, 2)), true);
        assert!(!c.active() && c.instrumenting());
        let c = Capture::new(Some((0, 0)), false);
        assert!(c.active());
        c.end_frame(0);
        assert!(!c.active());
    }
}
