//! A traced device's submission, from the hook's one call to the batch on its way to the
//! traceq thread (u_trace_flush): counted, its command buffers' traces collected
//! ([`DeviceTracer::prepare`]), the application's batches submitted as they are or with the
//! layer's ([`crate::gpu::interface::Backend::submit_wrapped`]), and the result committed.

use ash::vk;

use super::batch::SubmitStamp;
use crate::gpu::interface::{cpu_clock, cpu_ticks, Submission, Wrapping};
use crate::trace::DeviceTracer;

impl DeviceTracer {
    /// A submission (`vkQueueSubmit` or `vkQueueSubmit2`, see [`Submission`]), traced;
    /// `next` is the next layer's function.
    ///
    /// # Safety
    /// The application's arguments, valid for the command on this device's `queue`.
    pub unsafe fn submit<S: Submission>(
        &self,
        next: S::Next,
        queue: vk::Queue,
        submits: &[S],
        fence: vk::Fence,
    ) -> vk::Result {
        // SAFETY: forwarded with the application's arguments.
        let plain =
            || unsafe { S::call(next, queue, submits.len() as u32, submits.as_ptr(), fence) };
        // Idle (nothing recorded with tracepoints): one load and the count, before the
        // application's batches are looked at.
        if self.submission_untraced() {
            return plain();
        }
        // SAFETY: each of the application's batches holds a valid list.
        let cmdbufs = submits.iter().flat_map(|s| unsafe { s.command_buffers() });
        let can_split = submits.iter().all(S::splittable);
        let syncs = fence != vk::Fence::null() || submits.iter().any(S::signals);
        let backend = &self.backend;
        self.submit_with(S::NAME, queue, cmdbufs, (can_split, syncs), plain, |wrap| {
            // SAFETY: the application's batches, untouched, between the layer's own.
            unsafe { backend.submit_wrapped(next, queue, submits, fence, wrap) }
        })
    }

    /// The shared path of every traced submit: the application's batches go with the
    /// layer's (`wrapped`), or as they are (`plain`) when none of them is traced, and the
    /// batch is committed with the call's result. A panic in the layer's part leaves the call
    /// untraced, never undone. `(can_split, syncs)`: whether the layer may insert command
    /// buffers between the application's, and whether the call has a fence or signals a
    /// semaphore.
    fn submit_with(
        &self,
        what: &str,
        queue: vk::Queue,
        cmdbufs: impl Iterator<Item = vk::CommandBuffer>,
        (can_split, syncs): (bool, bool),
        plain: impl FnOnce() -> vk::Result,
        wrapped: impl FnOnce(&Wrapping<'_>) -> vk::Result,
    ) -> vk::Result {
        // The CPU side of the submission: when the application's call began (every output
        // shows it: a text trace on the GPU's clock, see `sink::submit_clock`), and for
        // Perfetto's vk_queue_submit how long the call took. One counter read, or two,
        // placed on CLOCK_BOOTTIME by traceq (`gpu::cpu_ticks`).
        let start = cpu_ticks::ticks();
        let submission = self.next_submission();
        let Some(pending) = self
            .guarded(what, || {
                self.prepare(submission, queue, cmdbufs, can_split, syncs)
            })
            .flatten()
        else {
            return plain();
        };
        let result = wrapped(&pending.wrapping());
        let timing = SubmitStamp {
            start,
            end: if self.submit_durations_timed {
                cpu_ticks::ticks()
            } else {
                0
            },
            tid: cpu_clock::tid(),
            ..SubmitStamp::default()
        };
        self.guarded(what, || self.commit(pending, result, timing));
        result
    }

    /// The application's `vkQueueWaitIdle` returned successfully: batches of `queue` left
    /// waiting for a later submission's signal are complete, and get it from the host.
    pub fn queue_idle(&self, queue: vk::Queue) {
        if let Some(ctx) = self.queues.indexed(queue) {
            // SAFETY: a context that `queues` holds until the device's teardown, which no call
            // on the device's queues can overlap.
            self.backend.signal_deferred(unsafe { &*ctx });
            self.consumer.flush();
        }
    }

    /// The application's `vkDeviceWaitIdle` returned successfully, or the device is being
    /// destroyed (after the application's last wait): as [`Self::queue_idle`] for every queue.
    pub fn device_idle(&self) {
        self.queues.each(|ctx| self.backend.signal_deferred(ctx));
        self.consumer.flush();
    }
}
