//! The CPU clocks GPU time is mapped to, read with `clock_gettime` (std exposes neither
//! `CLOCK_BOOTTIME` nor a raw `CLOCK_MONOTONIC` value), and the calling thread's id.

use std::cell::Cell;

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; the clocks read exist on every Linux the layer
    // runs on.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `CLOCK_BOOTTIME` in nanoseconds: Perfetto's trace clock.
pub fn boottime_ns() -> u64 {
    read(libc::CLOCK_BOOTTIME)
}

/// `CLOCK_MONOTONIC` in nanoseconds: the CPU domain of calibrated timestamps.
pub fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// The calling thread's CPU time in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`): its work
/// without the time other threads had its core.
pub fn thread_cpu_ns() -> u64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// `CLOCK_BOOTTIME - CLOCK_MONOTONIC` (the time spent suspended), read between two
/// monotonic reads so that the pair is as close as the CPU allows. A thread preempted
/// between the reads would place it microseconds off (CI saw a submit time 6.4 µs before
/// its call): the narrowest of a few reads is kept, most often the first.
pub fn boottime_minus_monotonic() -> i64 {
    let mut best = (u64::MAX, 0i64);
    for _ in 0..8 {
        let before = monotonic_ns();
        let boot = boottime_ns();
        let after = monotonic_ns();
        let width = after.saturating_sub(before);
        if width < best.0 {
            best = (width, boot as i64 - (before / 2 + after / 2) as i64);
        }
        if width <= TIGHT_NS {
            break;
        }
    }
    best.1
}

/// A pair of clock reads this close is taken as one instant.
const TIGHT_NS: u64 = 1_000;

thread_local! {
    static TID: Cell<u32> = const { Cell::new(0) };
}

/// The calling thread's kernel id (cached: one system call per thread).
pub fn tid() -> u32 {
    TID.with(|t| {
        if t.get() == 0 {
            // SAFETY: gettid has no preconditions.
            t.set(unsafe { libc::gettid() } as u32);
        }
        t.get()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boottime_is_monotonic_plus_suspend() {
        let offset = boottime_minus_monotonic();
        assert!(offset >= -1_000_000, "{offset}");
        let (m, b) = (monotonic_ns(), boottime_ns());
        assert!(b as i64 - m as i64 - offset < 1_000_000);
        assert!(tid() > 0 && tid() == tid());
    }
}
