//! Work queued behind a wait the host signals later (timeline wait-before-signal, legal
//! since Vulkan 1.2): the first batch waits on a value that the application signals with
//! `vkSignalSemaphore` only after many more submissions have returned. A layer that makes
//! a submission wait for earlier batches to complete deadlocks such an application.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ash::vk;

use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Device, Result};

/// Submissions queued behind the waiting one: more than any fixed-size queue of a few
/// hundred batches holds.
const BEHIND: usize = 400;
/// If no submission returned for this long, a watchdog signals the semaphore so that the
/// run ends (and fails, saying why) instead of hanging. Each submission takes micro- to
/// milliseconds, on a slow or busy machine too; one that waits for the host's signal never
/// returns: progress, not the loop's total time, tells them apart.
const WATCHDOG: Duration = Duration::from_secs(10);

pub(super) fn wait_before_signal(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let timeline = dev.timeline_semaphore(0)?;
    // Empty command buffers: each traced submission is a batch of the layer's, and empty
    // ones need no synchronisation with each other.
    let cbs = dev.command_buffers(BEHIND as u32 + 1)?;
    for &cb in &cbs {
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        dev.end(cb)?;
    }
    let fence = dev.fence()?;
    let signalled = AtomicBool::new(false);
    // Signals value 1 once, from whichever thread gets here first.
    let signal = || -> Result<bool> {
        if signalled.swap(true, Ordering::SeqCst) {
            return Ok(false);
        }
        let info = vk::SemaphoreSignalInfo::default()
            .semaphore(timeline)
            .value(1);
        // SAFETY: a live timeline semaphore whose value is 0; signalled only once.
        check(unsafe { d.signal_semaphore(&info) }, "vkSignalSemaphore")?;
        Ok(true)
    };
    let done = AtomicBool::new(false);
    let returned = AtomicUsize::new(0);
    let started = Instant::now();
    let (result, watchdog_signalled) = std::thread::scope(|scope| {
        let watchdog = scope.spawn(|| {
            let (mut seen, mut since) = (0, Instant::now());
            while since.elapsed() < WATCHDOG {
                if done.load(Ordering::SeqCst) {
                    return Ok(false);
                }
                let now = returned.load(Ordering::SeqCst);
                if now != seen {
                    (seen, since) = (now, Instant::now());
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            signal()
        });
        let result = submit_all(dev, &cbs, timeline, fence, &returned);
        done.store(true, Ordering::SeqCst);
        let watchdog_signalled = watchdog.join().unwrap_or(Ok(false));
        (result, watchdog_signalled)
    });
    let submitted_in = started.elapsed();
    // The application's own signal, after every submission returned (or failed: the work
    // already queued must still be released).
    signal()?;
    let before = result?;
    let by_watchdog = watchdog_signalled?;
    check(
        // SAFETY: the fence belongs to the last submission; bounded wait.
        unsafe { d.wait_for_fences(&[fence], true, 10_000_000_000) },
        "vkWaitForFences (the work behind the host signal)",
    )?;
    let after = monotonic_ns();
    for (i, &cb) in cbs.iter().enumerate() {
        sub.note(&format!("behind-host-signal-{i}"), &[cb], before[i], after);
    }
    // SAFETY: every submission has completed.
    unsafe {
        d.free_command_buffers(dev.pool, &cbs);
        d.destroy_fence(fence, None);
        d.destroy_semaphore(timeline, None);
    }
    if by_watchdog {
        eprintln!(
            "utrace-workload: of the {} submissions behind a host signal, {} had returned after {submitted_in:?}, the last {WATCHDOG:?} before: a submission waited for work only the application could release",
            BEHIND + 1,
            returned.load(Ordering::SeqCst)
        );
        return Ok(false);
    }
    Ok(true)
}

/// Submits the first command buffer waiting on `timeline` = 1, then the others, the last
/// with `fence`, counting in `returned` the submissions that returned; returns each
/// submission's start time.
fn submit_all(
    dev: &Device,
    cbs: &[vk::CommandBuffer],
    timeline: vk::Semaphore,
    fence: vk::Fence,
    returned: &AtomicUsize,
) -> Result<Vec<u64>> {
    let d = &dev.device;
    let mut before = Vec::with_capacity(cbs.len());
    let waits = [timeline];
    let values = [1u64];
    let stages = [vk::PipelineStageFlags::ALL_COMMANDS];
    for (i, cb) in cbs.iter().enumerate() {
        let one = std::slice::from_ref(cb);
        let mut timeline_info =
            vk::TimelineSemaphoreSubmitInfo::default().wait_semaphore_values(&values);
        let mut info = vk::SubmitInfo::default().command_buffers(one);
        if i == 0 {
            info = info
                .wait_semaphores(&waits)
                .wait_dst_stage_mask(&stages)
                .push_next(&mut timeline_info);
        }
        let last = i + 1 == cbs.len();
        before.push(monotonic_ns());
        check(
            // SAFETY: recorded command buffers of this device; the first waits on a value the
            // host signals after this loop (wait-before-signal); the fence is unsignalled.
            unsafe {
                d.queue_submit(
                    dev.queue,
                    &[info],
                    if last { fence } else { vk::Fence::null() },
                )
            },
            "vkQueueSubmit",
        )?;
        returned.fetch_add(1, Ordering::SeqCst);
    }
    Ok(before)
}
