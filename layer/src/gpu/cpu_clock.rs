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
/// monotonic reads so that the pair is as close as the CPU allows (CI saw a submit time
/// 6.4 µs before its call when a thread was preempted between them).
pub fn boottime_minus_monotonic() -> i64 {
    let (mono, boot) = bracketed(8, TIGHT_NS, monotonic_ns, boottime_ns);
    boot as i64 - mono as i64
}

/// `inner` read between two reads of `outer`, as one instant: `outer`'s midpoint and
/// `inner`, from the narrowest of up to `tries` brackets (the first no wider than
/// `tight` is kept at once, most often the first). A thread preempted between the reads
/// would pair them microseconds apart.
pub fn bracketed(
    tries: u32,
    tight: u64,
    mut outer: impl FnMut() -> u64,
    mut inner: impl FnMut() -> u64,
) -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..tries {
        let before = outer();
        let value = inner();
        let width = outer().wrapping_sub(before);
        if width < best.0 {
            best = (width, before + width / 2, value);
        }
        if width <= tight {
            break;
        }
    }
    (best.1, best.2)
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
        // Boottime read between two monotonic reads: however long this thread waited for
        // its core in between, offset lies within the bracket (give or take the offset's
        // own error, a microsecond unless every one of its reads was preempted).
        let (before, b, after) = (monotonic_ns(), boottime_ns(), monotonic_ns());
        let (low, high) = (b as i64 - after as i64, b as i64 - before as i64);
        assert!(
            low - 1_000_000 <= offset && offset <= high + 1_000_000,
            "{low} {offset} {high}"
        );
        assert!(tid() > 0 && tid() == tid());
    }
}
