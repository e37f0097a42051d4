//! Per-queue resources of the layer: a command pool for its own command buffers, the sets of
//! [`BatchResources`] that wrap each traced submission, and the queue's timeline semaphore.
//!
//! Around a traced submission that needs them (see `trace::submit::pending_submission`:
//! one-time command buffers whose queries were reset on the host need none) the layer runs
//! command buffers of its own:
//! - *re-arm*, before the application's batches: resets every query the submitted command
//!   buffers write, after an execution barrier that orders it after the previous batch's copy
//!   (so a reusable command buffer can be submitted again). Only where the queries are not
//!   known to be reset: with host reset they are handed out reset and each copy resets
//!   them after reading, so a resubmission on the same queue needs no re-arm;
//! - *copy*, after them: copies those timestamps into the batch's readback buffer (waiting
//!   for availability), makes the copy visible to the host, and with host reset resets the
//!   queries it read (a reset follows every earlier command on its queries).
//!
//! Queries are never reset inside a render pass this way, and a batch owns its results as
//! soon as its copy has run.

use ash::vk;
use parking_lot::Mutex;

use super::batch_resources::{BatchResources, RecordedWrap};
use super::check;
use super::completion::{Completion, CompletionMode};
use super::cpu_ticks::TickAnchor;
use super::layer_commands::{allocate_pair, record_resources, SetLoaderData};
#[cfg(doc)]
use super::recipe::fingerprint;
use super::recipe::Recipe;
use super::recorded_wraps::RecordedWraps;
use super::segments::{Arming, Segment};
use super::submission_counts::SubmissionCounts;
use super::timeline_signals::TimelineSignals;
use crate::loader::dispatch::DeviceDispatch;

pub struct QueueContext {
    pub queue: vk::Queue,
    pub family: u32,
    /// Its index in the family (`vkGetDeviceQueue`'s `queueIndex`).
    pub index: u32,
    /// Timeline semaphore signalled by each batch's copy; null in fence mode.
    timeline: vk::Semaphore,
    signals: TimelineSignals,
    /// Where the queue's submission stamps are placed on the CPU clock from.
    ticks: TickAnchor,
    inner: Mutex<Inner>,
    /// How its traced submissions went (said when it goes).
    pub submissions: SubmissionCounts,
}

struct Inner {
    pool: vk::CommandPool,
    /// Resources with nothing worth keeping recorded.
    free: Vec<BatchResources>,
    /// Resources whose command buffers can run again as recorded.
    recorded: RecordedWraps,
    /// Resources of batches given up before completing (device lost, timed out at exit):
    /// never reused, destroyed with the device.
    abandoned: Vec<BatchResources>,
    counts: WrapCounts,
}

/// How each wrapped submission (or save of a last run, see `trace::submit::saves`) got
/// its command buffers, said at `debug` when the queue goes (the tests read it to see that
/// resubmissions record nothing).
#[derive(Default)]
struct WrapCounts {
    /// Recorded for it.
    recorded: u64,
    /// Kept from a submission with an equal recipe (compared whole).
    by_recipe: u64,
    /// Kept from an earlier submission of the same recording alone (not compared).
    by_recording: u64,
}

impl QueueContext {
    pub fn new(
        d: &DeviceDispatch,
        queue: vk::Queue,
        family: u32,
        index: u32,
        mode: CompletionMode,
    ) -> Result<QueueContext, vk::Result> {
        let fp = &d.fp_v1_0;
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(
                vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER
                    | vk::CommandPoolCreateFlags::TRANSIENT,
            );
        let mut pool = vk::CommandPool::null();
        // SAFETY: valid create info on a live device.
        check(unsafe {
            (fp.create_command_pool)(d.handle, &pool_info, std::ptr::null(), &mut pool)
        })?;
        let mut timeline = vk::Semaphore::null();
        if mode == CompletionMode::Timeline {
            let mut type_info = vk::SemaphoreTypeCreateInfo::default()
                .semaphore_type(vk::SemaphoreType::TIMELINE)
                .initial_value(0);
            let info = vk::SemaphoreCreateInfo::default().push_next(&mut type_info);
            // SAFETY: valid create info; timeline semaphores were enabled at device creation.
            let r =
                unsafe { (fp.create_semaphore)(d.handle, &info, std::ptr::null(), &mut timeline) };
            if let Err(e) = check(r) {
                // SAFETY: the pool is unused.
                unsafe { (fp.destroy_command_pool)(d.handle, pool, std::ptr::null()) };
                return Err(e);
            }
        }
        Ok(QueueContext {
            queue,
            family,
            index,
            timeline,
            signals: TimelineSignals::default(),
            ticks: TickAnchor::default(),
            inner: Mutex::new(Inner {
                pool,
                free: Vec::new(),
                recorded: RecordedWraps::default(),
                abandoned: Vec::new(),
                counts: WrapCounts::default(),
            }),
            submissions: SubmissionCounts::default(),
        })
    }

    /// The command buffers kept from an earlier submission of the recording `recording`
    /// alone with `arming` (kept under `fingerprint`, noted from that submission), ready
    /// to run again as recorded with the batch's completion; `None` when none is kept
    /// (then [`Self::prepare`]). Nothing is compared but the recording and the arming: a
    /// recording's layer commands follow from it.
    pub fn rerun(&self, recording: u64, fingerprint: u64, arming: Arming) -> Option<RecordedWrap> {
        let mut inner = self.inner.lock();
        let mut res = inner.recorded.take_for(fingerprint, recording, arming)?;
        inner.counts.by_recording += 1;
        drop(inner);
        res.used = 1;
        Some(self.prepared(res, None))
    }

    /// Records the re-arm and copy command buffers of each segment (a submission is cut into
    /// segments where a command buffer runs a second time: its queries are copied and
    /// re-armed in between) and returns them with the batch's completion; `total` is the
    /// readback's size in slots, `fingerprint` the segments' ([`fingerprint`]). Command
    /// buffers kept from an earlier submission with an equal recipe run again instead.
    /// `recording`: the one recording submitted alone, which later finds them with
    /// [`Self::rerun`] (0 when there are several, or a one-time one). The caller submits
    /// them around the application's batches, then hands them back with [`Self::recycle`]
    /// once completed.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &self,
        d: &DeviceDispatch,
        set_loader_data: Option<SetLoaderData>,
        memory: &vk::PhysicalDeviceMemoryProperties,
        segments: &[Segment<'_>],
        (total, arming): (u32, Arming),
        fingerprint: u64,
        recording: u64,
    ) -> Result<RecordedWrap, vk::Result> {
        // The pool is externally synchronised: recording happens under this lock.
        let mut inner = self.inner.lock();
        let kept = inner.recorded.take(fingerprint, |recipe| {
            recipe.matches(segments, total, arming)
        });
        if let Some(mut res) = kept {
            inner.counts.by_recipe += 1;
            drop(inner);
            if let Some(recipe) = res.recipe.as_mut() {
                recipe.recorded_for = recording;
            }
            res.used = segments.len();
            return Ok(self.prepared(res, None));
        }
        let mut res = match inner.free.pop().or_else(|| inner.recorded.oldest()) {
            Some(res) => res,
            None => BatchResources {
                fence: self.fence(d)?,
                ..BatchResources::empty()
            },
        };
        while res.segments.len() < segments.len() {
            match allocate_pair(d, set_loader_data, inner.pool) {
                Ok(pair) => res.push(pair),
                Err(e) => {
                    inner.free.push(res);
                    return Err(e);
                }
            }
        }
        res.used = segments.len();
        res.recipe = None;
        inner.counts.recorded += 1;
        let outcome = record_resources(d, memory, &mut res, segments, total, arming);
        let untimed = match outcome {
            Ok(()) => {
                let mut recipe = Recipe::of(segments, total, arming);
                recipe.recorded_for = recording;
                res.recipe = Some(Box::new(recipe));
                res.fingerprint = fingerprint;
                None
            }
            // Re-arms recorded, no readback: the batch still goes (untimed).
            Err(e) if res.readback.is_none() && res.used > 0 => Some(e),
            Err(e) => {
                inner.free.push(res);
                return Err(e);
            }
        };
        drop(inner);
        Ok(self.prepared(res, untimed))
    }

    /// `res`, recorded, with the batch's completion.
    fn prepared(&self, res: BatchResources, untimed: Option<vk::Result>) -> RecordedWrap {
        let completion = if self.timeline != vk::Semaphore::null() {
            Completion::Timeline {
                semaphore: self.timeline,
                value: self.signals.signal(),
            }
        } else {
            Completion::Fence(res.fence)
        };
        RecordedWrap {
            resources: res,
            completion,
            untimed,
        }
    }

    /// The anchor of this queue's submission stamps (see `gpu::cpu_ticks`).
    pub fn tick_anchor(&self) -> &TickAnchor {
        &self.ticks
    }

    /// The completion of a batch that needs no command buffer of the layer's (a value of the
    /// queue's timeline; `None` in fence mode), and whether the batch signals it or leaves
    /// that to a later one ([`TimelineSignals`]). `app_syncs`: the application's submission
    /// has a fence or signals a semaphore.
    pub fn signal_only(&self, app_syncs: bool) -> Option<(Completion, bool)> {
        (self.timeline != vk::Semaphore::null()).then(|| {
            let (value, signals) = self.signals.signal_or_defer(app_syncs);
            let completion = Completion::Timeline {
                semaphore: self.timeline,
                value,
            };
            (completion, signals)
        })
    }

    /// The completion for a submission of nothing traced that synchronises (a fence-only
    /// submit after a burst, say) while batches wait for a signal: it signals for them.
    pub fn signal_for_waiting(&self) -> Option<Completion> {
        (self.timeline != vk::Semaphore::null() && self.signals.waiting()).then(|| {
            Completion::Timeline {
                semaphore: self.timeline,
                value: self.signals.signal(),
            }
        })
    }

    /// A batch that signals `completion` was submitted.
    pub fn signal_made(&self, completion: &Completion) {
        if let Completion::Timeline { value, .. } = *completion {
            self.signals.made(value);
        }
    }

    /// The last value of the queue's timeline whose signal was submitted (or made on the
    /// host): reached once everything submitted before it has completed. `None` in fence
    /// mode or before any signal.
    pub fn latest_signal(&self) -> Option<Completion> {
        let value = self.signals.latest_made();
        (self.timeline != vk::Semaphore::null() && value > 0).then_some(Completion::Timeline {
            semaphore: self.timeline,
            value,
        })
    }

    /// Whether a signal of the queue's timeline was handed to a submission that has not
    /// returned yet (or failed).
    pub fn signal_being_made(&self) -> bool {
        self.signals.being_made()
    }

    /// Whether something already submitted (or the host) will signal `completion`: false for
    /// a batch still waiting for the application's next submission.
    pub fn completion_submitted(&self, completion: &Completion) -> bool {
        match *completion {
            Completion::Timeline { value, .. } => self.signals.submitted(value),
            Completion::Fence(_) => true,
        }
    }

    /// After the application waited for this queue to go idle (or before the device goes):
    /// signals, on the host, the value the batches waiting for a signal carry. The queue is
    /// idle, so the value is above the semaphore's and no signal of it is pending.
    pub fn signal_deferred(&self, d: &DeviceDispatch) {
        let Some(signal) = d.signal_semaphore else {
            return;
        };
        let Some(value) = self.signals.take_deferred() else {
            return;
        };
        let info = vk::SemaphoreSignalInfo::default()
            .semaphore(self.timeline)
            .value(value);
        // SAFETY: the queue's own timeline semaphore (batches wait for signals only in
        // timeline mode), a value above its current one with no signal of it pending.
        let r = unsafe { signal(d.handle, &info) };
        if r == vk::Result::SUCCESS {
            self.signals.made(value);
        } else {
            log::error!("could not signal the layer's timeline semaphore ({r}); the queue's last batches may be given up");
        }
    }

    /// The layer fence of a batch (fence mode only; null otherwise).
    fn fence(&self, d: &DeviceDispatch) -> Result<vk::Fence, vk::Result> {
        let mut fence = vk::Fence::null();
        if self.timeline == vk::Semaphore::null() {
            let info = vk::FenceCreateInfo::default();
            // SAFETY: valid create info on a live device.
            check(unsafe {
                (d.fp_v1_0.create_fence)(d.handle, &info, std::ptr::null(), &mut fence)
            })?;
        }
        Ok(fence)
    }

    /// Returns the resources of a completed batch for reuse.
    pub fn recycle(&self, d: &DeviceDispatch, res: BatchResources) {
        if res.fence != vk::Fence::null() {
            // SAFETY: the fence is signalled and owned by the caller until pushed below.
            let _ = unsafe { (d.fp_v1_0.reset_fences)(d.handle, 1, &res.fence) };
        }
        let mut inner = self.inner.lock();
        match res.recipe {
            Some(_) => inner.recorded.keep(res.fingerprint, res),
            None => inner.free.push(res),
        }
    }

    /// Keeps the resources of a batch that may still be pending until the device goes.
    pub fn abandon(&self, res: BatchResources) {
        self.inner.lock().abandoned.push(res);
    }

    /// Destroys everything. Only when the device is idle and the traceq thread has stopped.
    /// (The command buffers go with their pool.)
    pub fn destroy(&self, d: &DeviceDispatch) {
        let mut inner = self.inner.lock();
        let Inner {
            pool,
            free,
            recorded,
            abandoned,
            counts,
        } = &mut *inner;
        log::debug!(
            "queue {:?}: the layer's command buffers were recorded for {} submissions or saves, kept from an equal one for {}, kept from the same recording for {}",
            self.queue,
            counts.recorded,
            counts.by_recipe,
            counts.by_recording
        );
        self.submissions.say(self.queue);
        let fp = &d.fp_v1_0;
        for res in free
            .drain(..)
            .chain(abandoned.drain(..))
            .chain(recorded.drain())
        {
            if let Some(r) = res.readback {
                r.destroy(d);
            }
            if res.fence != vk::Fence::null() {
                // SAFETY: the device is idle; nothing waits on the fence.
                unsafe { (fp.destroy_fence)(d.handle, res.fence, std::ptr::null()) };
            }
        }
        // SAFETY: the device is idle; destroying the pool frees its command buffers.
        unsafe {
            (fp.destroy_command_pool)(d.handle, *pool, std::ptr::null());
            if self.timeline != vk::Semaphore::null() {
                (fp.destroy_semaphore)(d.handle, self.timeline, std::ptr::null());
            }
        }
        *pool = vk::CommandPool::null();
    }
}
