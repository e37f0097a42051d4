//! When the trace is written: a capture is active or not. Command buffers recorded while a
//! capture is active (or all of them with `GPU_TRACE_INSTRUMENT=1`) get tracepoints;
//! batches submitted while it is active are written.
//!
//! A capture is active while two gates are open. The frame window: `GPU_TRACE_FRAMES=
//! FIRST-LAST` opens it ([`Capture::start`]) when frame FIRST begins and closes it
//! ([`Capture::stop`]) when frame LAST ends; without a window it stays open. And, for a
//! device whose output is Perfetto, a tracing session: the data source's on-start and
//! on-stop callbacks call [`session_started`] and [`session_stopped`] (process-wide, as a
//! Perfetto session is). Both kinds of start and stop only flip a flag that the recording
//! and submit paths read with one relaxed load.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Active tracing sessions that enable utrace's data source, in this process.
static SESSIONS: AtomicU32 = AtomicU32::new(0);

/// A tracing session enabling the data source started (Perfetto's on-start).
pub fn session_started() {
    SESSIONS.fetch_add(1, Ordering::Relaxed);
}

/// A tracing session stopped (Perfetto's on-stop).
pub fn session_stopped() {
    let _ = SESSIONS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
}

pub fn sessions_active() -> bool {
    SESSIONS.load(Ordering::Relaxed) > 0
}

pub struct Capture {
    /// The frame window's gate.
    active: AtomicBool,
    /// The output is a tracing session's: capture only while one is active.
    needs_session: bool,
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
    /// The window opened: the next frame is its first.
    pub opened: bool,
    /// The window closed: the frame that ended was its last.
    pub closed: bool,
}

impl Capture {
    pub fn new(
        window: Option<(u32, u32)>,
        instrument_always: bool,
        needs_session: bool,
    ) -> Capture {
        Capture {
            // Without a window everything is captured from the start; with one, frame 0 is
            // captured when the window starts there.
            active: AtomicBool::new(window.is_none_or(|(first, _)| first == 0)),
            needs_session,
            instrument_always,
            window,
        }
    }

    /// The frame window (with its session, for a Perfetto output) or a capture asked from
    /// outside the process ([`super::remote`]).
    pub fn active(&self) -> bool {
        (self.active.load(Ordering::Relaxed) && (!self.needs_session || sessions_active()))
            || super::remote::active()
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

    /// The frame window's first frame, when the device ended after `frames` frames without
    /// reaching it (nothing of the window was captured).
    pub fn window_missed(&self, frames: u32) -> Option<(u32, u32)> {
        self.window.filter(|&(first, _)| frames < first)
    }

    /// Frame `frame` ended (at `vkQueuePresentKHR`): the window's last frame stops the
    /// capture, the frame before its first starts it.
    pub fn end_frame(&self, frame: u32) -> FrameEnd {
        let captured = self.active();
        super::remote::REMOTE.frame_ended(frame);
        let (mut opened, mut closed) = (false, false);
        if let Some((first, last)) = self.window {
            if frame == last {
                self.stop();
                closed = true;
            }
            if frame + 1 == first {
                self.start();
                opened = true;
            }
        }
        FrameEnd {
            captured,
            opened,
            closed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_captures_exactly_its_frames() {
        let c = Capture::new(Some((3, 5)), false, false);
        let mut captured = Vec::new();
        for frame in 0..10 {
            // What a command buffer recorded during `frame` would get.
            if c.instrumenting() {
                captured.push(frame);
            }
            let end = c.end_frame(frame);
            assert!(end.captured == captured.contains(&frame));
            assert_eq!((end.opened, end.closed), (frame == 2, frame == 5));
        }
        assert_eq!(captured, vec![3, 4, 5]);
    }

    #[test]
    fn a_window_the_application_never_reached_is_told() {
        let c = Capture::new(Some((5, 10)), false, false);
        assert_eq!(c.window_missed(3), Some((5, 10)));
        assert_eq!(c.window_missed(5), None, "frame 5 began");
        assert_eq!(Capture::new(None, false, false).window_missed(0), None);
        assert_eq!(
            Capture::new(Some((0, 2)), false, false).window_missed(0),
            None
        );
    }

    #[test]
    fn without_a_window_everything_is_captured_and_instrument_means_always() {
        let c = Capture::new(None, false, false);
        assert!(c.active() && c.end_frame(0).captured && c.active());
        let c = Capture::new(Some((2, 2)), true, false);
        assert!(!c.active() && c.instrumenting());
        let c = Capture::new(Some((0, 0)), false, false);
        assert!(c.active());
        c.end_frame(0);
        assert!(!c.active());
    }

    #[test]
    fn a_session_gates_the_capture_of_a_device_that_needs_one() {
        // The only test in this binary that touches the session count.
        let c = Capture::new(None, false, true);
        let window_only = Capture::new(None, false, false);
        assert!(!c.active() && !c.instrumenting() && window_only.active());
        session_started();
        assert!(c.active() && c.instrumenting());
        session_stopped();
        session_stopped(); // an unmatched stop leaves the count at zero
        assert!(!c.active());
        session_started();
        assert!(c.active());
        session_stopped();
    }
}
