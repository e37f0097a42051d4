//! Hardware shapes: Lavapipe presented as the GPUs people profile on, chosen with
//! `UTRACE_SHAPE`:
//!
//! | shape   | timestampPeriod | valid bits | the device offers |
//! |---------|-----------------|------------|-------------------|
//! | `intel` | 52.083          | 36, wrapping `UTRACE_SHAPE_WRAP_MS` (1000) after load | everything |
//! | `amd`   | 10.0            | 64         | everything, and a transfer-only family without timestamps and a compute family without graphics |
//! | `v1_1`  | 83.333          | 64         | Vulkan 1.1: no calibrated timestamps, host query reset or timeline semaphores |
//!
//! Each says it is a GPU (`amd` a discrete one, the others integrated), not Lavapipe's CPU
//! device type.
//!
//! Lavapipe's timestamps are `CLOCK_MONOTONIC` nanoseconds. Every one the layers above can
//! read is turned into ticks the same way, wherever it is read: on the CPU
//! (`vkGetQueryPoolResults`, `vkGetCalibratedTimestamps*`, [`queries`]) and on the GPU
//! (`vkCmdCopyQueryPoolResults`, a compute pass over the copied range, [`gpu_pass`]):
//!
//! `ticks = (((ns - base) * multiplier) >> 32) + offset`, masked to the valid bits, with
//! `multiplier = round(2^32 / period)` and `base` the clock when the layer loaded.
//!
//! The tests need the truth beside what utrace made of it: every value turned into ticks is
//! logged with its nanoseconds, and at `vkDestroyDevice` the pairs are appended to
//! `UTRACE_SHAPE_LOG` (lines `ticks ns`). The shape's parameters are said once on stderr.

/// Calls the next layer's device-level `$name`, resolved for `$handle`'s device, with
/// `$args`; `None` when the next layer has no such function.
macro_rules! device_down {
    ($handle:expr, $name:expr, $pfn:ty, ($($arg:expr),*)) => {{
        // SAFETY: a live object of a device of this chain; the pointer is the next layer's
        // function of this signature; the arguments are the caller's, or copies of them
        // that live across the call.
        unsafe {
            $crate::loader::next_device_fn($handle, $name).map(|f| {
                let f: $pfn = std::mem::transmute(f);
                f($($arg),*)
            })
        }
    }};
}

/// Calls the next layer's instance-level `$name` for the physical device `$physical`.
macro_rules! instance_down {
    ($physical:expr, $name:expr, $pfn:ty, ($($arg:expr),*)) => {{
        // SAFETY: a live physical device of this chain; the pointer is the next layer's
        // function of this signature; the arguments are the caller's.
        unsafe {
            $crate::loader::next_instance_fn($physical, $name).map(|f| {
                let f: $pfn = std::mem::transmute(f);
                f($($arg),*)
            })
        }
    }};
}

pub mod extra_families;
pub mod family_indices;
pub mod gpu_pass;
pub mod physical;
pub mod queries;
pub mod queue_hooks;

use std::io::Write;
use std::sync::OnceLock;

use parking_lot::Mutex;

/// One emulated device.
pub struct Shape {
    pub name: &'static str,
    pub period: f32,
    pub multiplier: u32,
    pub valid_bits: u32,
    pub mask: u64,
    pub base: u64,
    /// Placed when the first device is made (see [`Shape::offset`]).
    offset: OnceLock<u64>,
    wrap_ms: u64,
    /// Vulkan 1.1: no calibrated timestamps, host query reset or timeline semaphores.
    pub v1_1: bool,
    /// Extra transfer-only and compute families (see [`extra_families`]).
    pub extra_families: bool,
}

impl Shape {
    fn new(name: &'static str, period: f32, valid_bits: u32, v1_1: bool) -> Shape {
        let extra_families = name == "amd";
        let mask = if valid_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << valid_bits) - 1
        };
        let multiplier = (4_294_967_296.0 / f64::from(period)).round() as u32;
        Shape {
            name,
            period,
            multiplier,
            valid_bits,
            mask,
            base: monotonic_ns(),
            offset: OnceLock::new(),
            wrap_ms: std::env::var("UTRACE_SHAPE_WRAP_MS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(1000),
            v1_1,
            extra_families,
        }
    }

    /// The ticks added to the scaled nanoseconds, fixed the first time it is asked for (at
    /// the first `vkCreateDevice`): a counter of fewer than 64 bits is placed so that it
    /// wraps `UTRACE_SHAPE_WRAP_MS` (1000) later, about a second into the application's
    /// work; a 64-bit one reads three days of uptime, far from the driver's nanoseconds.
    pub fn offset(&self) -> u64 {
        *self.offset.get_or_init(|| {
            if self.valid_bits < 64 {
                let wrap_at = monotonic_ns() + self.wrap_ms * 1_000_000;
                let until_wrap = self.scaled(wrap_at - self.base);
                (self.mask - until_wrap).wrapping_add(1) & self.mask
            } else {
                self.scaled(3 * 24 * 3600 * 1_000_000_000)
            }
        })
    }

    /// `(ns * multiplier) >> 32`, as the shader computes it.
    fn scaled(&self, ns: u64) -> u64 {
        ((u128::from(ns) * u128::from(self.multiplier)) >> 32) as u64
    }

    /// The ticks this device gives for the driver's `ns`.
    pub fn ticks(&self, ns: u64) -> u64 {
        self.scaled(ns.saturating_sub(self.base))
            .wrapping_add(self.offset())
            & self.mask
    }
}

/// The shape chosen by `UTRACE_SHAPE`, if any (an unknown name is said once and ignored).
pub fn shape() -> Option<&'static Shape> {
    static SHAPE: OnceLock<Option<Shape>> = OnceLock::new();
    SHAPE
        .get_or_init(|| {
            let name = std::env::var("UTRACE_SHAPE").ok()?;
            let shape = match name.as_str() {
                "intel" => Shape::new("intel", 52.083, 36, false),
                "amd" => Shape::new("amd", 10.0, 64, false),
                "v1_1" => Shape::new("v1_1", 83.333, 64, true),
                other => {
                    eprintln!("utrace-shape: unknown shape {other:?} (intel, amd, v1_1)");
                    return None;
                }
            };
            eprintln!(
                "utrace-shape: {} period={} valid_bits={} base_ns={} multiplier={}",
                shape.name, shape.period, shape.valid_bits, shape.base, shape.multiplier
            );
            Some(shape)
        })
        .as_ref()
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Pairs shaped on the CPU, waiting for the next `vkDestroyDevice` to be written.
static HOST_LOG: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// Logs a `(ticks, ns)` pair shaped on the CPU.
pub fn log_pair(ticks: u64, ns: u64) {
    HOST_LOG.lock().push((ticks, ns));
}

/// Appends the CPU's pairs and `gpu_pairs` to `UTRACE_SHAPE_LOG`, if set.
pub fn write_log(gpu_pairs: &[(u64, u64)]) {
    let host = std::mem::take(&mut *HOST_LOG.lock());
    let Some(path) = std::env::var_os("UTRACE_SHAPE_LOG") else {
        return;
    };
    let mut text = String::new();
    for (ticks, ns) in host.iter().chain(gpu_pairs) {
        text.push_str(&format!("{ticks} {ns}\n"));
    }
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        eprintln!("utrace-shape: cannot write {}: {e}", path.to_string_lossy());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_intel_counter_wraps_when_asked() {
        let s = Shape::new("intel", 52.083, 36, false);
        let _ = s.offset();
        let wrap = monotonic_ns() + 1_000_000_000;
        assert!(
            s.ticks(wrap - 100_000) > s.mask - 4_000,
            "just before the wrap"
        );
        assert!(s.ticks(wrap + 100_000) < 4_000, "just after it");
        // A second is 19.2 M ticks of 52.083 ns.
        let second = s
            .ticks(s.base + 1_000_000_000)
            .wrapping_sub(s.ticks(s.base))
            & s.mask;
        assert_eq!(second, 19_200_122, "10^9 * round(2^32 / 52.083) >> 32");
    }

    #[test]
    fn ticks_are_nanoseconds_over_the_period() {
        let s = Shape::new("amd", 10.0, 64, false);
        assert_eq!(s.ticks(s.base + 1_000_000) - s.ticks(s.base), 100_000);
    }
}
