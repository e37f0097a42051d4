//! Submitting and waiting, with each submission's CPU window and command buffers logged for
//! the report.

use ash::vk;
use ash::vk::Handle;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::report::Submission;
use crate::vk::{check, monotonic_ns, Device, Result};

/// Milliseconds to sleep after each logged submission (`utrace-workload --pace-ms`), so a
/// test can act while the run is under way.
static PACE_MS: AtomicU64 = AtomicU64::new(0);

pub fn set_pace_ms(ms: u64) {
    PACE_MS.store(ms, Ordering::Relaxed);
}

/// The pace set with [`set_pace_ms`], for scenarios that pace themselves.
pub fn pace_ms() -> u64 {
    PACE_MS.load(Ordering::Relaxed)
}

/// Submits and waits, recording each submission's CPU window for the report.
pub struct Submitter<'a> {
    dev: &'a Device,
    fence: vk::Fence,
    /// Presents made so far (the frame of the next submission).
    pub frame: u32,
    pub log: Vec<Submission>,
    /// Submissions counted but not logged (see `submit_unlogged`).
    pub unlogged: u64,
    /// Resident memory samples, in KiB.
    pub rss_kib: Vec<u64>,
    /// How long the application's own idle waits took (see `DeviceReport::idle_waits_ns`).
    pub idle_waits_ns: Vec<u64>,
}

/// A semaphore to wait on (at a stage) and one to signal, for swapchain frames.
pub type Sync = Option<(vk::Semaphore, vk::PipelineStageFlags, vk::Semaphore)>;

impl<'a> Submitter<'a> {
    pub fn new(dev: &'a Device) -> Result<Self> {
        Ok(Submitter {
            dev,
            fence: dev.fence()?,
            frame: 0,
            log: Vec::new(),
            unlogged: 0,
            rss_kib: Vec::new(),
            idle_waits_ns: Vec::new(),
        })
    }

    fn finish(&mut self, label: &str, cbs: &[vk::CommandBuffer], before: u64) -> Result<()> {
        self.dev.wait_and_reset(self.fence)?;
        self.note(label, cbs, before, monotonic_ns());
        crate::chatter::after_submission();
        let pace = PACE_MS.load(Ordering::Relaxed);
        if pace > 0 {
            std::thread::sleep(std::time::Duration::from_millis(pace));
        }
        Ok(())
    }

    /// Logs a submission made by the caller, with its CPU window.
    pub fn note(&mut self, label: &str, cbs: &[vk::CommandBuffer], before: u64, after: u64) {
        self.log.push(Submission {
            label: label.to_string(),
            cpu_before_ns: before,
            cpu_after_ns: after,
            cmdbufs: cbs.iter().map(|cb| format!("{:#x}", cb.as_raw())).collect(),
            frame: self.frame,
            secondaries: Vec::new(),
            call_ns: 0,
        });
    }

    /// As [`Self::note`], with how long the submit call itself took.
    pub fn note_call(&mut self, label: &str, cbs: &[vk::CommandBuffer], times: [u64; 3]) {
        let [before, call_end, after] = times;
        self.note(label, cbs, before, after);
        if let Some(last) = self.log.last_mut() {
            last.call_ns = call_end - before;
        }
    }

    /// `vkQueueSubmit` of `cbs` and a wait for its fence, counted but not logged (a long
    /// run's log would itself grow the process).
    pub fn submit_unlogged(&mut self, cbs: &[vk::CommandBuffer]) -> Result<()> {
        let info = vk::SubmitInfo::default().command_buffers(cbs);
        check(
            // SAFETY: recorded command buffers of this device; the fence is unsignalled.
            unsafe {
                self.dev
                    .device
                    .queue_submit(self.dev.queue, &[info], self.fence)
            },
            "vkQueueSubmit",
        )?;
        self.dev.wait_and_reset(self.fence)?;
        self.unlogged += 1;
        Ok(())
    }

    /// `vkQueueSubmit` of one batch, then a wait for its fence.
    pub fn submit(&mut self, label: &str, cbs: &[vk::CommandBuffer], sync: Sync) -> Result<()> {
        let (waits, stages, signals) = match sync {
            Some((w, s, sig)) => (vec![w], vec![s], vec![sig]),
            None => (vec![], vec![], vec![]),
        };
        let info = vk::SubmitInfo::default()
            .command_buffers(cbs)
            .wait_semaphores(&waits)
            .wait_dst_stage_mask(&stages)
            .signal_semaphores(&signals);
        let before = monotonic_ns();
        check(
            // SAFETY: recorded command buffers of this device; the fence is unsignalled.
            unsafe {
                self.dev
                    .device
                    .queue_submit(self.dev.queue, &[info], self.fence)
            },
            "vkQueueSubmit",
        )?;
        self.finish(label, cbs, before)
    }

    /// The same through `vkQueueSubmit2` (synchronization2).
    pub fn submit2(&mut self, label: &str, cbs: &[vk::CommandBuffer], sync: Sync) -> Result<()> {
        let cb_infos: Vec<vk::CommandBufferSubmitInfo> = cbs
            .iter()
            .map(|&cb| vk::CommandBufferSubmitInfo::default().command_buffer(cb))
            .collect();
        let (waits, signals) = match sync {
            Some((w, _, sig)) => (
                vec![vk::SemaphoreSubmitInfo::default()
                    .semaphore(w)
                    .stage_mask(vk::PipelineStageFlags2::ALL_TRANSFER)],
                vec![vk::SemaphoreSubmitInfo::default()
                    .semaphore(sig)
                    .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)],
            ),
            None => (vec![], vec![]),
        };
        let info = vk::SubmitInfo2::default()
            .command_buffer_infos(&cb_infos)
            .wait_semaphore_infos(&waits)
            .signal_semaphore_infos(&signals);
        let before = monotonic_ns();
        check(
            // SAFETY: as in `submit`; synchronization2 is enabled on the device.
            unsafe {
                self.dev
                    .device
                    .queue_submit2(self.dev.queue, &[info], self.fence)
            },
            "vkQueueSubmit2",
        )?;
        self.finish(label, cbs, before)
    }

    pub fn destroy(self) -> Vec<Submission> {
        // SAFETY: the fence is idle (every submission was waited for).
        unsafe { self.dev.device.destroy_fence(self.fence, None) };
        self.log
    }
}
