//! The gate of a capture asked from outside the process (`utrace capture`, through the
//! control socket: see `crate::control`). Process-wide, as the socket is: a capture of N
//! frames starts when the current frame ends and stops when N more frames have ended
//! (frames counted at `vkQueuePresentKHR`, by whichever device presents). The recording and
//! submit paths read it with one relaxed load ([`active`]), beside the frame window's and
//! the Perfetto session's gates (see `capture_gates`).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

pub struct Remote {
    active: AtomicBool,
    /// Asked for: active from the next frame on.
    pending: AtomicBool,
    frames_left: AtomicU32,
    /// The captured frames, inclusive; `NONE` until known.
    first: AtomicU32,
    last: AtomicU32,
}

const NONE: u32 = u32::MAX;

/// The process's gate.
pub static REMOTE: Remote = Remote::new();

/// Whether a remote capture is capturing now.
#[inline]
pub fn active() -> bool {
    REMOTE.active.load(Ordering::Relaxed)
}

impl Remote {
    pub const fn new() -> Remote {
        Remote {
            active: AtomicBool::new(false),
            pending: AtomicBool::new(false),
            frames_left: AtomicU32::new(0),
            first: AtomicU32::new(NONE),
            last: AtomicU32::new(NONE),
        }
    }

    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Asks for the next `frames` frames (none is in progress: the control side checks).
    pub fn request(&self, frames: u32) {
        self.first.store(NONE, Ordering::Relaxed);
        self.last.store(NONE, Ordering::Relaxed);
        self.frames_left.store(frames.max(1), Ordering::Relaxed);
        self.pending.store(true, Ordering::Release);
    }

    /// Ends the capture now (`utrace capture --stop`): frames up to `current_frame` (the one
    /// in progress) are its.
    pub fn stop(&self, current_frame: u32) {
        self.pending.store(false, Ordering::Relaxed);
        if self.active.swap(false, Ordering::Relaxed) {
            let _ = self.last.compare_exchange(
                NONE,
                current_frame,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
    }

    /// Frame `frame` ended: the capture starts after it when asked, and ends with its last.
    pub fn frame_ended(&self, frame: u32) {
        if self.active.load(Ordering::Relaxed) {
            let left = self.frames_left.fetch_sub(1, Ordering::Relaxed);
            if left <= 1 {
                self.active.store(false, Ordering::Relaxed);
                self.last.store(frame, Ordering::Relaxed);
            }
        } else if self.pending.swap(false, Ordering::Acquire) {
            self.first.store(frame.wrapping_add(1), Ordering::Relaxed);
            self.active.store(true, Ordering::Relaxed);
        }
    }

    /// The captured frames so far: (first, last), either `None` until known.
    pub fn frames(&self) -> (Option<u32>, Option<u32>) {
        let known = |v: u32| (v != NONE).then_some(v);
        (
            known(self.first.load(Ordering::Relaxed)),
            known(self.last.load(Ordering::Relaxed)),
        )
    }

    /// Whether a batch or frame end of frame `frame` belongs to the capture.
    pub fn includes(&self, frame: u32) -> bool {
        match self.frames() {
            (Some(first), last) => frame >= first && last.is_none_or(|l| frame <= l),
            (None, _) => false,
        }
    }
}

impl Default for Remote {
    fn default() -> Remote {
        Remote::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_captures_the_next_frames() {
        let r = Remote::new();
        assert!(!r.is_active());
        r.request(2);
        assert!(!r.is_active(), "from the next frame on");
        r.frame_ended(6);
        assert!(r.is_active() && r.frames() == (Some(7), None));
        assert!(r.includes(7) && !r.includes(6));
        r.frame_ended(7);
        assert!(r.is_active());
        r.frame_ended(8);
        assert!(!r.is_active() && r.frames() == (Some(7), Some(8)));
        assert!(r.includes(8) && !r.includes(9));
        r.frame_ended(9);
        assert!(!r.is_active(), "nothing more without a request");
        r.request(100);
        r.frame_ended(20);
        r.stop(23);
        assert!(!r.is_active() && r.frames() == (Some(21), Some(23)));
    }
}
