//! The GPU clock measured against the CPU's where the device cannot sample both at once
//! (no calibrated timestamps, or `UTRACE_FORCE_MEASURED_CLOCK=1`). Each round brackets one
//! timestamp the device writes between two CPU clock reads (a [`Window`]); the round with
//! the narrowest window is kept, its midpoint paired with the timestamp, to within half the
//! window. Rounds are, best first:
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
use super::clock_window::Window;
use super::cpu_clock;
use super::gated_round;
use super::layer_commands::SetLoaderData;
use crate::loader::dispatch::DeviceDispatch;

/// How long the gated rounds may go on (a CPU driver on a busy machine gives narrow
/// windows only now and then); they stop after [`GATED_ROUNDS`], or sooner once
/// [`GATED_ROUNDS_ENOUGH`] rounds gave a window of [`GATED_WIDTH_ENOUGH_NS`] or less.
pub const GATED_BUDGET_NS: u64 = 50_000_000;
const GATED_ROUNDS: usize = 2_000;
const GATED_ROUNDS_ENOUGH: usize = 32;
const GATED_WIDTH_ENOUGH_NS: u64 = 2_000;
const FIRST_SPIN_NS: u64 = 50_000;
const FENCED_ROUNDS: usize = 5;

/// The narrower of `best` and `w`.
fn narrowest(best: Option<Window>, w: Window) -> Option<Window> {
    match best {
        Some(b) if b.width() <= w.width() => Some(b),
        _ => Some(w),
    }
}

/// The pair, to within half the narrowest window.
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
        .and_then(|()| narrowest_window(&mut objects, d, queue));
    objects.destroy(d);
    let (window, rounds) = result?;
    Ok(window.pair(mask, period, rounds))
}

/// The narrowest window of the gated rounds, or of the fenced ones if those fail.
fn narrowest_window(
    o: &mut ClockObjects,
    d: &DeviceDispatch,
    queue: vk::Queue,
) -> Result<(Window, Rounds), vk::Result> {
    if o.gated != vk::CommandBuffer::null() {
        if let Some(best) = gated_rounds(o, d, queue) {
            return Ok((best, Rounds::Gated));
        }
        if o.in_flight {
            // Not waited for: nothing more can be submitted safely.
            return Err(vk::Result::TIMEOUT);
        }
    }
    let mut best = None;
    for _ in 0..FENCED_ROUNDS {
        best = narrowest(best, fenced_round(o, d, queue)?);
    }
    Ok((best.ok_or(vk::Result::ERROR_UNKNOWN)?, Rounds::Fenced))
}

/// The narrowest window of gated rounds run until the budget is spent or one is narrow
/// enough; `None` if the first failed.
fn gated_rounds(o: &mut ClockObjects, d: &DeviceDispatch, queue: vk::Queue) -> Option<Window> {
    let start = cpu_clock::boottime_ns();
    let mut best: Option<Window> = None;
    let mut rounds = 0;
    while rounds < GATED_ROUNDS {
        // `done` is awaited spinning for 50 µs at most, and no longer than the narrowest
        // window so far: a slower round would not be kept.
        let spin = best.map_or(FIRST_SPIN_NS, |b| b.width().min(FIRST_SPIN_NS));
        match gated_round::round(o, d, queue, spin) {
            Ok(w) => best = narrowest(best, w),
            Err(e) => {
                log::debug!("the GPU clock's gated rounds stopped ({e})");
                break;
            }
        }
        rounds += 1;
        let enough = rounds >= GATED_ROUNDS_ENOUGH
            && best.is_some_and(|b| b.width() <= GATED_WIDTH_ENOUGH_NS);
        if enough || cpu_clock::boottime_ns() > start + GATED_BUDGET_NS {
            break;
        }
    }
    log::debug!(
        "the GPU clock measured in {rounds} gated rounds over {} µs",
        (cpu_clock::boottime_ns() - start) / 1_000
    );
    best
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
    fn the_narrowest_window_is_kept_and_paired_at_its_midpoint() {
        let w = |before, after| Window {
            ticks: 1_000,
            before,
            after,
        };
        let best = [w(100, 900), w(500, 540), w(0, 4_000)]
            .into_iter()
            .fold(None, narrowest)
            .unwrap();
        assert_eq!(best, w(500, 540));
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
