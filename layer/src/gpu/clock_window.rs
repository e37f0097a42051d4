//! One round of the GPU clock's measurement: a timestamp and the CPU times it was written
//! between (see [`super::measured_clock`]).

use super::calibration::{ClockPair, MeasuredPair, Rounds};
use super::caps::ticks_to_ns;

/// A timestamp and the CPU times (`CLOCK_BOOTTIME`) it was written between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// As the device wrote it (unmasked ticks).
    pub ticks: u64,
    pub before: u64,
    pub after: u64,
}

impl Window {
    pub fn width(&self) -> u64 {
        self.after.saturating_sub(self.before)
    }

    /// The timestamp paired with the window's midpoint, to within half the window.
    pub fn pair(&self, mask: u64, period: f32, rounds: Rounds) -> MeasuredPair {
        let half = self.width() / 2;
        MeasuredPair {
            pair: ClockPair {
                gpu_ns: ticks_to_ns(self.ticks & mask, period),
                boottime_ns: self.before + half,
            },
            within_ns: half,
            rounds,
        }
    }
}
