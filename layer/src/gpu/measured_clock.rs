//! The GPU clock measured against the CPU's where the device cannot sample both at once
//! (no calibrated timestamps, or `UTRACE_FORCE_MEASURED_CLOCK=1`). Each round brackets one
//! timestamp the device writes between two CPU clock reads (a [`Window`]). The narrowest
//! round's timestamp is paired with the CPU time every round agrees on
//! ([`super::clock_window::intersect`]): the intersection of their windows, each moved by
//! the GPU time between the timestamps, to within half its width. One round may bound the
//! timestamp closely from below and another from above, so the pair is tighter than any
//! single window. Rounds are, best first:
//! - *gated* ([`super::gated_round`]): the device waits for an event the host sets, then
//!   writes the timestamp; the window is the set and one poll, 1-2 µs on Lavapipe. Repeated
//!   until enough of them gave a narrow window, for at most [`GATED_BUDGET_NS`];
//! - *fenced*, where the gated rounds fail (an event the device never reaches, a call that
//!   fails): submit, wait for the fence; the window holds the submission's latency and the
//!   wake-up after the fence, tens of µs.
//!
//! It runs once, when the application first gets a queue (inside `vkGetDeviceQueue*`,
//! before the application can use that queue). It is not repeated to follow drift: a round
//! needs the queue idle and to itself, and the host waiting on the device, so later it
//! would make the application's calls wait (see docs/design.md, Clocks).

use ash::vk;
use ash::vk::Handle;

use super::calibration::{MeasuredPair, Rounds};
use super::check;
use super::clock_objects::ClockObjects;
use super::clock_window::{intersect, Window};
use super::cpu_clock;
use super::gated_round;
use super::layer_commands::SetLoaderData;
use crate::loader::dispatch::DeviceDispatch;

/// How long the gated rounds may go on (a CPU driver on a busy machine gives narrow
/// windows only now and then); they stop after [`GATED_ROUNDS`], or sooner once
/// [`GATED_ROUNDS_ENOUGH`] rounds together placed the timestamp to within
/// [`GATED_WITHIN_ENOUGH_NS`].
pub const GATED_BUDGET_NS: u64 = 50_000_000;
const GATED_ROUNDS: usize = 2_000;
const GATED_ROUNDS_ENOUGH: usize = 32;
const GATED_WITHIN_ENOUGH_NS: u64 = 500;
const FIRST_SPIN_NS: u64 = 50_000;
const FENCED_ROUNDS: usize = 5;

/// The narrower of `best` and `w`.
fn narrowest(best: Option<Window>, w: Window) -> Option<Window> {
    match best {
        Some(b) if b.width() <= w.width() => Some(b),
        _ => Some(w),
    }
}

/// The pair every round agrees on, to within half the width they leave.
pub fn measure(
    d: &DeviceDispatch,
    set_loader_data: Option<SetLoaderData>,
    queue: vk::Queue,
    family: u32,
    mask: u64,
    period: f32,
) -> Result<MeasuredPair, vk::Result> {
    // SAFETY: the next layer's GDPA on the live device.
    let has_results =
        unsafe { (d.get_device_proc_addr)(d.handle, c"vkGetQueryPoolResults".as_ptr()).is_some() };
    if !has_results {
        return Err(vk::Result::ERROR_EXTENSION_NOT_PRESENT);
    }
    if let Some(set) = set_loader_data {
        // The loader gives the queue its dispatch pointer only after vkGetDeviceQueue
        // returns; the layers beneath find their state by it, so it is set now (to the
        // value the loader will write again).
        // SAFETY: the loader's callback for a dispatchable object of this device.
        check(unsafe { set(d.handle, queue.as_raw() as usize as *mut std::ffi::c_void) })?;
    }
    let mut objects = ClockObjects::default();
    let result = objects
        .create(d, set_loader_data, family)
        .and_then(|()| rounds(&mut objects, d, queue, mask, period));
    objects.destroy(d);
    let (windows, rounds) = result?;
    placed(&windows, mask, period, rounds).ok_or(vk::Result::ERROR_UNKNOWN)
}

/// The narrowest window's timestamp placed by all of them; by that window alone where
/// they disagree (a period that is not the clock's).
fn placed(windows: &[Window], mask: u64, period: f32, rounds: Rounds) -> Option<MeasuredPair> {
    let reference = windows.iter().copied().fold(None, narrowest)?;
    intersect(windows, &reference, mask, period, rounds).or_else(|| {
        log::debug!("the GPU clock's rounds disagree; the narrowest alone is kept");
        Some(reference.pair(mask, period, rounds))
    })
}

/// The windows of the gated rounds, or of the fenced ones if those fail.
fn rounds(
    o: &mut ClockObjects,
    d: &DeviceDispatch,
    queue: vk::Queue,
    mask: u64,
    period: f32,
) -> Result<(Vec<Window>, Rounds), vk::Result> {
    if o.gated != vk::CommandBuffer::null() {
        let windows = gated_rounds(o, d, queue, mask, period);
        if !windows.is_empty() {
            return Ok((windows, Rounds::Gated));
        }
        if o.in_flight {
            // Not waited for: nothing more can be submitted safely.
            return Err(vk::Result::TIMEOUT);
        }
    }
    let windows = (0..FENCED_ROUNDS)
        .map(|_| fenced_round(o, d, queue))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((windows, Rounds::Fenced))
}

/// The windows of gated rounds run until the budget is spent or they place the timestamp
/// closely enough; empty if the first failed.
fn gated_rounds(
    o: &mut ClockObjects,
    d: &DeviceDispatch,
    queue: vk::Queue,
    mask: u64,
    period: f32,
) -> Vec<Window> {
    let start = cpu_clock::boottime_ns();
    let mut windows = Vec::with_capacity(GATED_ROUNDS);
    let mut best: Option<Window> = None;
    while windows.len() < GATED_ROUNDS {
        // `done` is awaited spinning for 50 µs at most, and no longer than the narrowest
        // window so far: a slower round would add little.
        let spin = best.map_or(FIRST_SPIN_NS, |b| b.width().min(FIRST_SPIN_NS));
        match gated_round::round(o, d, queue, spin) {
            Ok(w) => {
                best = narrowest(best, w);
                windows.push(w);
            }
            Err(e) => {
                log::debug!("the GPU clock's gated rounds stopped ({e})");
                break;
            }
        }
        let enough = windows.len() >= GATED_ROUNDS_ENOUGH
            && placed(&windows, mask, period, Rounds::Gated)
                .is_some_and(|p| p.within_ns <= GATED_WITHIN_ENOUGH_NS);
        if enough || cpu_clock::boottime_ns() > start + GATED_BUDGET_NS {
            break;
        }
    }
    log::debug!(
        "the GPU clock measured in {} gated rounds over {} µs",
        windows.len(),
        (cpu_clock::boottime_ns() - start) / 1_000
    );
    windows
}

/// Submits the fenced command buffer: its timestamp was written after the read before the
/// submit and before the read once its fence signalled.
fn fenced_round(
    o: &mut ClockObjects,
    d: &DeviceDispatch,
    queue: vk::Queue,
) -> Result<Window, vk::Result> {
    let fp = &d.fp_v1_0;
    let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&o.fenced));
    // SAFETY: the application cannot use `queue` yet (this runs inside the call that hands
    // it out); the previous submission completed, so the fence is free to reset.
    let before = unsafe {
        check((fp.reset_fences)(d.handle, 1, &o.fence))?;
        let before = cpu_clock::boottime_ns();
        check((fp.queue_submit)(queue, 1, &submit, o.fence))?;
        before
    };
    o.in_flight = true;
    o.wait(d)?;
    let after = cpu_clock::boottime_ns();
    Ok(Window {
        ticks: o.ticks(d)?,
        before,
        after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_narrowest_window_is_the_reference_and_every_window_places_it() {
        let w = |before, after| Window {
            ticks: 1_000,
            before,
            after,
        };
        let windows = [w(100, 900), w(500, 540), w(0, 4_000)];
        let best = windows.iter().copied().fold(None, narrowest).unwrap();
        assert_eq!(best, w(500, 540));
        // Written at the same GPU time, the windows intersect in the narrowest.
        assert_eq!(
            placed(&windows, u64::MAX, 1.0, Rounds::Gated),
            Some(best.pair(u64::MAX, 1.0, Rounds::Gated))
        );
        // Windows that cannot hold one instant: the narrowest alone.
        let apart = [
            w(500, 540),
            Window {
                ticks: 9_000_000,
                ..w(500, 540)
            },
        ];
        assert_eq!(
            placed(&apart, u64::MAX, 1.0, Rounds::Gated),
            Some(best.pair(u64::MAX, 1.0, Rounds::Gated))
        );
        // Ticks masked to the valid bits, then scaled by the period.
        let m = Window {
            ticks: (1 << 40) | 1_000,
            ..best
        }
        .pair((1 << 32) - 1, 2.0, Rounds::Gated);
        assert_eq!(
            (m.pair.gpu_ns, m.pair.boottime_ns, m.within_ns),
            (2_000, 520, 20)
        );
    }
}
