//! One round of the tight clock measurement: the gated command buffer
//! ([`super::clock_objects`]) is submitted and reaches its wait for the host's `go`; the CPU
//! clock is read, `go` set, and `done` (set by the device once the timestamp is written)
//! polled, the CPU clock read after each poll. The timestamp was written after the read
//! before the set and before the read after the first poll that saw `done`: a window of a
//! few µs that neither the submission's latency nor a wake-up after a fence widens.

use ash::vk;

use super::check;
use super::clock_objects::ClockObjects;
use super::clock_window::Window;
use super::cpu_clock;
use crate::loader::dispatch::DeviceDispatch;

/// Longest wait for the device to reach the wait or to write the timestamp. Far beyond
/// what a working device takes; past it the gated rounds are given up.
const REACH_TIMEOUT_NS: u64 = 100_000_000;
/// Between polls that do not spin.
const POLL_SLEEP: std::time::Duration = std::time::Duration::from_micros(10);

/// One gated round on `queue` (idle, and not usable by the application meanwhile), polling
/// `done` without a pause for `spin_ns` (a round slower than that is not kept anyway).
/// `Err` when the device did not reach the wait or signal `done` in time, or a call failed:
/// the gated rounds are then given up (the command buffer was let through and waited for).
pub fn round(
    o: &mut ClockObjects,
    d: &DeviceDispatch,
    queue: vk::Queue,
    spin_ns: u64,
) -> Result<Window, vk::Result> {
    let fp = &d.fp_v1_0;
    let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&o.gated));
    // SAFETY: the previous round's submission completed (its fence was waited for), so
    // nothing waits on or sets the events or uses the fence; the queue is the layer's for
    // now (this runs inside the call that hands it to the application).
    unsafe {
        for event in [o.started, o.go, o.done] {
            check((fp.reset_event)(d.handle, event))?;
        }
        check((fp.reset_fences)(d.handle, 1, &o.fence))?;
        check((fp.queue_submit)(queue, 1, &submit, o.fence))?;
    }
    o.in_flight = true;
    let reached = poll(d, o.started, 0);
    let before = cpu_clock::boottime_ns();
    // SAFETY: only the host sets `go`; the submission waiting on it is pending. Set even
    // when the device did not show it reached the wait, so that the submission can end.
    let set = check(unsafe { (fp.set_event)(d.handle, o.go) });
    let written = match (&reached, &set) {
        (Ok(()), Ok(())) => poll(d, o.done, spin_ns),
        _ => Err(vk::Result::TIMEOUT),
    };
    let after = cpu_clock::boottime_ns();
    set?;
    o.wait(d)?;
    reached?;
    written?;
    Ok(Window {
        ticks: o.ticks(d)?,
        before,
        after,
    })
}

/// Polls `event` until it is set (`Err(TIMEOUT)` after [`REACH_TIMEOUT_NS`]): without a
/// pause for `spin_ns`, as the time of the first poll that sees it matters, then sleeping
/// between polls, as a CPU driver's thread may need this core to get there (and waking
/// up may move this thread to another).
fn poll(d: &DeviceDispatch, event: vk::Event, spin_ns: u64) -> Result<(), vk::Result> {
    let start = cpu_clock::boottime_ns();
    loop {
        // SAFETY: an event of this device, read only.
        match unsafe { (d.fp_v1_0.get_event_status)(d.handle, event) } {
            vk::Result::EVENT_SET => return Ok(()),
            vk::Result::EVENT_RESET => {}
            error => return Err(error),
        }
        let now = cpu_clock::boottime_ns();
        if now > start + REACH_TIMEOUT_NS {
            return Err(vk::Result::TIMEOUT);
        }
        if now < start + spin_ns {
            std::hint::spin_loop();
        } else {
            std::thread::sleep(POLL_SLEEP);
        }
    }
}
