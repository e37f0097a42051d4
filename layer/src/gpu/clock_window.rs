//! One round of the GPU clock's measurement: a timestamp and the CPU times it was written
//! between (see [`super::measured_clock`]), and how the rounds together place one
//! timestamp on the CPU's clock.

use super::calibration::{ClockPair, MeasuredPair, Rounds};
use super::caps::ticks_to_ns;

/// How far apart the GPU's and the CPU's clocks may run, in parts per million, when
/// windows measured at different times are combined: a GPU crystal's tolerance (tens of
/// ppm) beside the kernel's largest NTP slew of `CLOCK_BOOTTIME` (500 ppm).
pub const RATE_TOLERANCE_PPM: i128 = 600;

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

/// The GPU time from `from`'s timestamp to `to`'s, in ns (negative when `to` came first):
/// the nearer way round the counter's valid bits.
fn gpu_delta_ns(from: u64, to: u64, mask: u64, period: f32) -> i128 {
    let forward = to.wrapping_sub(from) & mask;
    if forward <= mask / 2 {
        i128::from(ticks_to_ns(forward, period))
    } else {
        -i128::from(ticks_to_ns(from.wrapping_sub(to) & mask, period))
    }
}

/// `reference`'s timestamp placed by every window at once. Each window says when, on the
/// CPU's clock, the reference's timestamp was written: its own window, moved by the GPU
/// time between the two timestamps and widened by [`RATE_TOLERANCE_PPM`] of it. The truth
/// lies in each, so in their intersection, whose midpoint is paired with the timestamp, to
/// within half its width: never wider than the reference's own window, and narrower where
/// one round bounds it closely from below (the device wrote soon after the host let it)
/// and another from above (the host saw it soon after). `None` when the windows disagree
/// (no common instant: a clock that is not what its period says).
pub fn intersect(
    windows: &[Window],
    reference: &Window,
    mask: u64,
    period: f32,
    rounds: Rounds,
) -> Option<MeasuredPair> {
    let (mut lo, mut hi) = (i128::from(reference.before), i128::from(reference.after));
    for w in windows {
        let moved = gpu_delta_ns(reference.ticks, w.ticks, mask, period);
        let slack = moved.abs() * RATE_TOLERANCE_PPM / 1_000_000 + 1;
        lo = lo.max(i128::from(w.before) - moved - slack);
        hi = hi.min(i128::from(w.after) - moved + slack);
    }
    if lo > hi {
        return None;
    }
    let half = (hi - lo) / 2;
    Some(MeasuredPair {
        pair: ClockPair {
            gpu_ns: ticks_to_ns(reference.ticks & mask, period),
            boottime_ns: u64::try_from(lo + half).ok()?,
        },
        within_ns: u64::try_from(half).ok()?,
        rounds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: u64 = u64::MAX;

    fn w(ticks: u64, before: u64, after: u64) -> Window {
        Window {
            ticks,
            before,
            after,
        }
    }

    #[test]
    fn one_window_gives_its_midpoint() {
        let only = w(1_000, 5_000, 6_000);
        let m = intersect(&[only], &only, ALL, 1.0, Rounds::Gated).unwrap();
        assert_eq!(
            (m.pair.gpu_ns, m.pair.boottime_ns, m.within_ns),
            (1_000, 5_500, 500)
        );
        assert_eq!(m, only.pair(ALL, 1.0, Rounds::Gated));
    }

    #[test]
    fn rounds_that_bound_either_side_narrow_the_pair_around_the_truth() {
        // The truth: CPU = GPU + 10_000. One round saw the timestamp written 100 ns after
        // its `go` and 1,900 ns before its poll; another 1,800 ns after and 200 ns before.
        let early = w(100_000, 109_900, 111_900);
        let late = w(200_000, 208_200, 210_200);
        let m = intersect(&[early, late], &early, ALL, 1.0, Rounds::Gated).unwrap();
        // The early round bounds it from below (100 ns), the late one from above (200 ns,
        // and 61 ns of rate tolerance for the 100 µs of GPU time it was moved by).
        assert_eq!(m.within_ns, (100 + 200 + 61) / 2);
        let truth = 110_000i64;
        assert!((m.pair.boottime_ns as i64 - truth).unsigned_abs() <= m.within_ns);
        assert!(m.within_ns < early.width() / 2);
    }

    #[test]
    fn a_counter_that_wrapped_between_rounds_is_followed() {
        // 36 valid bits; the second round's timestamp wrapped past zero.
        let mask = (1 << 36) - 1;
        let a = w(mask - 99, 1_000_000, 1_000_400);
        let b = w(100, 1_000_150, 1_000_260);
        let m = intersect(&[a, b], &a, mask, 1.0, Rounds::Gated).unwrap();
        // b's window moved back by its 200 ticks: [999_950, 1_000_060] (+-1), so a's pair is
        // bounded above by it.
        assert_eq!(m.within_ns, (1_000_061 - 1_000_000) / 2);
    }

    #[test]
    fn windows_that_disagree_give_nothing() {
        let a = w(0, 1_000, 1_100);
        let b = w(1_000_000, 1_000, 1_100);
        assert_eq!(intersect(&[a, b], &a, ALL, 1.0, Rounds::Gated), None);
    }
}
