//! A device's timestamps as one continuous nanosecond clock.
//!
//! A queue family's counter holds `timestampValidBits` bits: 36 on Intel, whose counter at
//! 52 ns a tick wraps every hour of uptime (every 11 minutes at 10 ns), so a capture may
//! cross a wrap. Each family's values are unwrapped against the last value seen of that
//! family: the nearest value, forwards or back, whose valid bits are the ones read. That
//! holds as long as two successive values read are less than half a wrap apart (30 minutes
//! at 52 ns; a device that writes nothing for longer may be placed a wrap off). Batches are
//! read in order on one traceq thread, so successive values are seconds apart at most;
//! clock pairs (calibrated or measured) are unwrapped the same way. With 64 valid bits
//! nothing is done.

use std::sync::atomic::{AtomicU64, Ordering};

use super::caps::{ticks_to_ns, timestamp_mask, DeviceCaps};

/// No value seen yet.
const NONE: u64 = u64::MAX;

/// One queue family's counter.
pub struct FamilyTime {
    mask: u64,
    period: f32,
    /// The last value read, unwrapped (or [`NONE`]).
    last: AtomicU64,
}

impl FamilyTime {
    fn new(valid_bits: u32, period: f32) -> FamilyTime {
        FamilyTime {
            mask: timestamp_mask(valid_bits),
            period,
            last: AtomicU64::new(NONE),
        }
    }

    /// A raw timestamp in the device's continuous nanoseconds.
    #[inline]
    pub fn to_ns(&self, raw: u64) -> u64 {
        ticks_to_ns(self.unwrap(raw), self.period)
    }

    /// A raw timestamp as continuous ticks.
    #[inline]
    pub fn unwrap(&self, raw: u64) -> u64 {
        if self.mask == u64::MAX {
            return raw;
        }
        let raw = raw & self.mask;
        let last = self.last.load(Ordering::Relaxed);
        let value = if last == NONE {
            raw
        } else {
            nearest(last, raw, self.mask)
        };
        // Readers race only with clock pairs taken about now: any of their stores is near
        // enough for the next value.
        self.last.store(value, Ordering::Relaxed);
        value
    }

    /// Notes a point of the counter known only in nanoseconds (a measured clock pair), so
    /// that later values are unwrapped from it.
    pub fn seed_ns(&self, ns: u64) {
        if self.mask == u64::MAX || self.period <= 0.0 {
            return;
        }
        let ticks = (ns as f64 / f64::from(self.period)).round() as u64;
        let _ = self.unwrap(ticks);
    }
}

/// The value with `raw`'s valid bits nearest `last` (never below zero).
fn nearest(last: u64, raw: u64, mask: u64) -> u64 {
    let forward = raw.wrapping_sub(last) & mask;
    if forward <= mask / 2 {
        last + forward
    } else {
        // `mask - forward + 1` ticks back: the counter was read out of order, a little.
        last.saturating_sub(mask - forward + 1)
    }
}

/// Every queue family's counter of a device.
pub struct DeviceTime {
    families: Vec<FamilyTime>,
}

impl DeviceTime {
    pub fn new(caps: &DeviceCaps) -> DeviceTime {
        DeviceTime {
            families: caps
                .families
                .iter()
                .map(|f| FamilyTime::new(f.timestamp_valid_bits, caps.timestamp_period))
                .collect(),
        }
    }

    /// Family `family`'s counter (a family the device lacks reads as 64-bit nanoseconds).
    pub fn family(&self, family: u32) -> &FamilyTime {
        static PLAIN: FamilyTime = FamilyTime {
            mask: u64::MAX,
            period: 1.0,
            last: AtomicU64::new(NONE),
        };
        self.families.get(family as usize).unwrap_or(&PLAIN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BITS36: u64 = (1 << 36) - 1;

    #[test]
    fn a_wrap_goes_on_counting() {
        let f = FamilyTime::new(36, 1.0);
        assert_eq!(f.unwrap(BITS36 - 10), BITS36 - 10);
        assert_eq!(f.unwrap(BITS36), BITS36);
        assert_eq!(f.unwrap(5), BITS36 + 6, "after the wrap");
        assert_eq!(
            f.unwrap(BITS36 - 2),
            BITS36 - 2,
            "a value from before it, read late"
        );
        assert_eq!(f.unwrap(7), BITS36 + 8);
        assert_eq!(f.unwrap(1 << 30), BITS36 + 1 + (1 << 30), "well after");
    }

    #[test]
    fn durations_across_a_wrap_are_never_negative() {
        let f = FamilyTime::new(36, 52.083);
        let begin = f.to_ns(BITS36 - 3);
        let end = f.to_ns(2);
        // Six ticks, each end rounded down to whole nanoseconds.
        assert!(
            (end - begin).abs_diff(ticks_to_ns(6, 52.083)) <= 1,
            "{}",
            end - begin
        );
    }

    #[test]
    fn full_width_counters_are_left_alone() {
        let f = FamilyTime::new(64, 1.0);
        assert_eq!(f.unwrap(u64::MAX - 1), u64::MAX - 1);
        assert_eq!(f.unwrap(3), 3);
    }

    #[test]
    fn a_seeded_counter_unwraps_from_the_seed() {
        let f = FamilyTime::new(36, 10.0);
        f.seed_ns((BITS36 - 100) * 10);
        assert_eq!(f.unwrap(50), BITS36 + 51);
    }
}
