//! Submission stamps in the CPU's own counter, placed on `CLOCK_BOOTTIME` later by traceq.
//!
//! Every traced submission says when its call began on the CPU (the text formats' submit
//! time, Perfetto's `vk_queue_submit`). Reading `CLOCK_BOOTTIME` for it cost a submission
//! about 55 ns on the development VM (the vDSO's data and code are cold by the time the
//! application submits again), a third of the layer's whole submission path. Where the
//! kernel keeps time with the TSC (x86_64, clocksource `tsc`: the counter is invariant and
//! synchronised across cores, and `CLOCK_BOOTTIME` is a linear function of it between NTP
//! adjustments), a submission reads the TSC instead (about 10 ns), as Tracy does. Each queue
//! keeps an *anchor*, a (ticks, boottime) pair read together, renewed by the submission that
//! finds it older than [`ANCHOR_TICKS`] (at most about once a millisecond per queue). traceq
//! places a stamp by the line through the batch's anchor and a pair it reads itself when it
//! takes the batch: exact at both ends, and between them off by no more than the NTP slew
//! over one anchor's age (at worst 500 ppm of a millisecond, half a microsecond).
//!
//! Elsewhere the counter is `CLOCK_BOOTTIME` itself (an anchor's two halves are equal) and
//! the placement returns the stamp unchanged.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::cpu_clock::{boottime_ns, bracketed};

/// An anchor older than this many ticks is renewed: about 0.7 ms at 3 GHz, 2 ms where the
/// counter is in nanoseconds.
pub const ANCHOR_TICKS: u64 = 1 << 21;

/// Whether stamps are TSC reads: decided once per process.
fn tsc_usable() -> bool {
    static USABLE: OnceLock<bool> = OnceLock::new();
    *USABLE.get_or_init(|| {
        cfg!(target_arch = "x86_64")
            && std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .is_ok_and(|s| s.trim() == "tsc")
    })
}

#[cfg(target_arch = "x86_64")]
fn tsc() -> u64 {
    // SAFETY: RDTSC exists on every x86_64 CPU and only reads the counter.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Never reached (`tsc_usable` is false off x86_64): it keeps `tick_pair` one function.
#[cfg(not(target_arch = "x86_64"))]
fn tsc() -> u64 {
    boottime_ns()
}

/// The counter now: a submission's stamp.
#[inline]
pub fn ticks() -> u64 {
    if tsc_usable() {
        tsc()
    } else {
        boottime_ns()
    }
}

/// The counter and `CLOCK_BOOTTIME` read together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickPair {
    pub ticks: u64,
    pub boot_ns: u64,
}

/// A pair read as one instant: the boottime read between two counter reads (see
/// [`bracketed`]), kept at once when they are a boottime read's worth apart (256 ticks,
/// about 100 ns).
pub fn tick_pair() -> TickPair {
    if !tsc_usable() {
        let now = boottime_ns();
        return TickPair {
            ticks: now,
            boot_ns: now,
        };
    }
    let (ticks, boot_ns) = bracketed(8, (1 << 8) - 1, tsc, boottime_ns);
    TickPair { ticks, boot_ns }
}

/// `CLOCK_BOOTTIME` of the stamp `ticks`, by the line through `anchor` (read before or
/// around the stamp) and `later` (read after it). A counter in nanoseconds (equal halves)
/// gives the stamp itself.
pub fn place(ticks: u64, anchor: TickPair, later: TickPair) -> u64 {
    let span_ticks = later.ticks.wrapping_sub(anchor.ticks) as i64;
    let span_ns = later.boot_ns.wrapping_sub(anchor.boot_ns) as i64;
    let delta = ticks.wrapping_sub(anchor.ticks) as i64;
    if span_ticks <= 0 {
        return anchor.boot_ns.saturating_add_signed(delta);
    }
    let offset = i128::from(delta) * i128::from(span_ns) / i128::from(span_ticks);
    anchor.boot_ns.saturating_add_signed(offset as i64)
}

/// A queue's anchor, read and renewed only inside the application's submit calls on the
/// queue (which Vulkan serialises): relaxed atomics, so that the queue's context stays
/// `Sync`.
#[derive(Default)]
pub struct TickAnchor {
    ticks: AtomicU64,
    boot_ns: AtomicU64,
}

impl TickAnchor {
    /// The anchor for a stamp taken at `now`, renewed first if it is more than
    /// [`ANCHOR_TICKS`] away from it (a stamp read just before the anchor was renewed is
    /// a little older than it).
    #[inline]
    pub fn for_stamp(&self, now: u64) -> TickPair {
        let ticks = self.ticks.load(Ordering::Relaxed);
        if ticks != 0 && (now.wrapping_sub(ticks) as i64).unsigned_abs() < ANCHOR_TICKS {
            return TickPair {
                ticks,
                boot_ns: self.boot_ns.load(Ordering::Relaxed),
            };
        }
        let pair = tick_pair();
        self.ticks.store(pair.ticks, Ordering::Relaxed);
        self.boot_ns.store(pair.boot_ns, Ordering::Relaxed);
        pair
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(ticks: u64, boot_ns: u64) -> TickPair {
        TickPair { ticks, boot_ns }
    }

    #[test]
    fn a_stamp_is_placed_on_the_line_through_the_two_pairs() {
        // 2.5 ticks a nanosecond.
        let (anchor, later) = (pair(1_000, 5_000), pair(26_000, 15_000));
        assert_eq!(place(1_000, anchor, later), 5_000);
        assert_eq!(place(26_000, anchor, later), 15_000);
        assert_eq!(place(6_000, anchor, later), 7_000);
        // A stamp a little before the anchor (renewed just after it) lands before it.
        assert_eq!(place(750, anchor, later), 4_900);
        // Hours between the pairs: no overflow.
        let hours = pair(1_000 + 36_000_000_000_000, 5_000 + 14_400_000_000_000);
        assert_eq!(place(1_000 + 25_000, anchor, hours), 15_000);
    }

    #[test]
    fn a_counter_in_nanoseconds_places_a_stamp_where_it_is() {
        let (anchor, later) = (pair(100, 100), pair(900, 900));
        assert_eq!(place(400, anchor, later), 400);
        // Pairs read at one instant.
        assert_eq!(place(100, anchor, anchor), 100);
    }

    #[test]
    fn stamps_place_between_the_boottime_reads_around_them() {
        let anchor = TickAnchor::default();
        // The pairs' own uncertainty (half a pair's width at most, about 50 ns).
        let slack = 200;
        for _ in 0..1000 {
            let before = boottime_ns();
            let stamp = ticks();
            let after = boottime_ns();
            let placed = place(stamp, anchor.for_stamp(stamp), tick_pair());
            assert!(
                before - slack <= placed && placed <= after + slack,
                "stamp placed at {placed}, read between {before} and {after}"
            );
        }
    }

    #[test]
    fn an_anchor_is_renewed_once_it_is_old() {
        let anchor = TickAnchor::default();
        let now = ticks();
        let first = anchor.for_stamp(now);
        assert_eq!(anchor.for_stamp(now + 10), first, "young: kept");
        let renewed = anchor.for_stamp(now + 2 * ANCHOR_TICKS);
        assert!(renewed.ticks > first.ticks && renewed.boot_ns >= first.boot_ns);
        assert_eq!(
            anchor.for_stamp(renewed.ticks + 10),
            renewed,
            "renewed: kept"
        );
    }
}
