//! The GPU clock paired with the CPU's: Perfetto places GPU timestamps on its timeline with
//! clock snapshots, each a (GPU time, `CLOCK_BOOTTIME`) pair taken at one instant.
//!
//! Where the device has `VK_KHR/EXT_calibrated_timestamps` (enabled by the layer at
//! `vkCreateDevice`), every snapshot is a fresh `vkGetCalibratedTimestamps*` of the device
//! and `CLOCK_MONOTONIC` domains, so drift between the clocks is followed. Otherwise the
//! pair is measured once (see [`super::measured_clock`]) and reused: the two clocks are
//! taken not to drift apart over a trace.

use std::sync::{Arc, OnceLock};

use ash::vk;

use super::cpu_clock;
use super::device_time::DeviceTime;
use crate::loader::dispatch::DeviceDispatch;

/// Calibrated reads per clock pair, the tightest kept; up to [`MORE_READS`] while none is
/// within [`TIGHT_DEVIATION_NS`] (a thread preempted in each read of a loaded machine).
const CALIBRATION_READS: usize = 4;
const MORE_READS: usize = 16;
const TIGHT_DEVIATION_NS: u64 = 1_000;

/// One instant on both clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockPair {
    /// GPU time in the nanoseconds events carry (masked ticks times the period).
    pub gpu_ns: u64,
    pub boottime_ns: u64,
}

/// A pair measured once, and how far from the truth it may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasuredPair {
    pub pair: ClockPair,
    /// Half the window the GPU timestamp was bracketed in, in ns.
    pub within_ns: u64,
    pub rounds: Rounds,
}

/// How the timestamp kept was bracketed (see [`super::measured_clock`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounds {
    /// Between the host's set of an event the device waited for and its poll of the next.
    Gated,
    /// Between a submission and its fence.
    Fenced,
}

impl Rounds {
    pub fn name(self) -> &'static str {
        match self {
            Rounds::Gated => "gated rounds",
            Rounds::Fenced => "rounds around fences",
        }
    }
}

#[derive(Clone)]
pub enum GpuClock {
    Calibrated {
        dispatch: Arc<DeviceDispatch>,
        get: vk::PFN_vkGetCalibratedTimestampsKHR,
        /// The device's counters, and the family whose counter the pairs read.
        time: Arc<DeviceTime>,
        family: u32,
    },
    /// Set once measured, at the application's first `vkGetDeviceQueue*`.
    Measured(Arc<OnceLock<MeasuredPair>>),
}

impl GpuClock {
    /// The calibrated clock of a device on which the layer enabled the extension.
    pub fn calibrated(
        dispatch: Arc<DeviceDispatch>,
        time: Arc<DeviceTime>,
        family: u32,
    ) -> Option<GpuClock> {
        let load = |name: &std::ffi::CStr| {
            // SAFETY: the next layer's GDPA on the live device the dispatch belongs to.
            unsafe { (dispatch.get_device_proc_addr)(dispatch.handle, name.as_ptr()) }
        };
        let f = load(c"vkGetCalibratedTimestampsKHR")
            .or_else(|| load(c"vkGetCalibratedTimestampsEXT"))?;
        // SAFETY: the KHR and EXT commands share this signature.
        let get = unsafe {
            std::mem::transmute::<unsafe extern "system" fn(), vk::PFN_vkGetCalibratedTimestampsKHR>(
                f,
            )
        };
        Some(GpuClock::Calibrated {
            dispatch,
            get,
            time,
            family,
        })
    }

    /// How far the measured pair may be off, in ns; `None` for a calibrated clock (or one
    /// not measured).
    pub fn measured_within_ns(&self) -> Option<u64> {
        match self {
            GpuClock::Measured(measured) => measured.get().map(|m| m.within_ns),
            GpuClock::Calibrated { .. } => None,
        }
    }

    /// A pair taken now (calibrated), or the measured one.
    pub fn sample(&self) -> Option<ClockPair> {
        match self {
            GpuClock::Measured(measured) => measured.get().map(|m| m.pair),
            GpuClock::Calibrated {
                dispatch,
                get,
                time,
                family,
            } => {
                let infos = [
                    vk::CalibratedTimestampInfoKHR::default()
                        .time_domain(vk::TimeDomainKHR::DEVICE),
                    vk::CalibratedTimestampInfoKHR::default()
                        .time_domain(vk::TimeDomainKHR::CLOCK_MONOTONIC),
                ];
                // A read the thread was preempted in pairs two instants microseconds apart
                // (the driver says so in its deviation): the tightest of a few reads is
                // kept. A snapshot is taken about once a second, so this costs nothing.
                let mut best: Option<([u64; 2], u64)> = None;
                for read in 0..MORE_READS {
                    if read >= CALIBRATION_READS
                        && best.is_some_and(|(_, d)| d <= TIGHT_DEVIATION_NS)
                    {
                        break;
                    }
                    let mut values = [0u64; 2];
                    let mut deviation = 0u64;
                    // SAFETY: the extension is enabled on this live device; arrays of two.
                    let result = unsafe {
                        get(
                            dispatch.handle,
                            2,
                            infos.as_ptr(),
                            values.as_mut_ptr(),
                            &mut deviation,
                        )
                    };
                    if result != vk::Result::SUCCESS {
                        break;
                    }
                    if best.is_none_or(|(_, d)| deviation < d) {
                        best = Some((values, deviation));
                    }
                }
                let (values, _) = best?;
                let boottime = values[1] as i64 + cpu_clock::boottime_minus_monotonic();
                Some(ClockPair {
                    gpu_ns: time.family(*family).to_ns(values[0]),
                    boottime_ns: boottime.max(0) as u64,
                })
            }
        }
    }
}
