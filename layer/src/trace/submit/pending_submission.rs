//! Flush at submit (u_trace_flush): the traces of the submitted command buffers become a
//! batch, signalled only, or wrapped by the layer's copy command buffers (and re-arms where
//! the queries are not reset already).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ash::vk;
use ash::vk::Handle;

use super::batch::{Batch, CommandBufferList, Results, SubmitStamp, TraceList};
use super::cross_queue::cross_queue_waits;
use super::saves::{SaveCommands, ToSave};
use super::segment_lists::SegmentLists;
use crate::gpu::interface::{
    wrap_fingerprint, Arming, BatchResources, Completion, QueueContext, RecordedWrap, RunWaits,
    Wrapping,
};
use crate::trace::record::recorded_trace::{LastRun, RecordedTrace, Taken};
use crate::trace::record::submit_order::SubmitOrder;
use crate::trace::traceq::Message;
use crate::trace::DeviceTracer;

/// A batch ready to go down with the application's, waiting for the submit call's result.
pub struct PendingSubmission {
    queue: Arc<QueueContext>,
    /// The executions of instrumented command buffers, in order (a command buffer may run
    /// more than once in one call).
    traces: TraceList,
    /// Every command buffer the call submitted, instrumented or not.
    command_buffers: CommandBufferList,
    /// Positions (among the submitted command buffers) where a new segment starts.
    splits: Vec<usize>,
    /// Copies on other queues the re-arm must wait for (timeline semaphore, value).
    waits: Vec<(vk::Semaphore, u64)>,
    /// Whether the layer's re-arm command buffers run before each segment (otherwise the
    /// queries are reset already, and each copy resets after reading).
    rearm: bool,
    /// The layer's command buffers and readback; `None` when the batch is only signalled
    /// (its timestamps stay in the queries).
    resources: Option<BatchResources>,
    /// The copies of last runs left in the queries that this submission saves before its
    /// own (the traces hold the rest of each save).
    saves: SaveCommands,
    completion: Completion,
    /// Whether the submission signals `completion` (a batch of one-time command buffers
    /// may leave it to a later one).
    signal: bool,
    frame: u32,
    /// The device's number of this submit call.
    submission: u64,
}

impl PendingSubmission {
    pub fn wrapping(&self) -> Wrapping<'_> {
        Wrapping {
            segments: self.resources.as_ref().map_or(&[], |r| r.used()),
            saves: self.saves.as_slice(),
            splits: &self.splits,
            waits: &self.waits,
            rearm: self.rearm,
            completion: self.completion,
            signal: self.signal,
        }
    }
}

impl DeviceTracer {
    /// Collects the traces of `cmdbufs` (in submission order) and what the layer submits
    /// with them. `None`: nothing to trace, submit the application's batches as they are.
    /// `can_split`: whether the layer may insert its command buffers between the
    /// application's (see [`crate::gpu::interface::Submission::splittable`]); without it a
    /// command buffer that runs twice in the call cannot be timed the second time.
    ///
    /// A submission whose traces all find their queries reset on the host (one-time command
    /// buffers run for the first time, reusable ones whose last run was read: see
    /// [`RecordedTrace::take_armed_run`]) is only signalled: no command buffer of the
    /// layer's is recorded, nothing is allocated. Any other is
    /// wrapped: a copy after each segment, and a re-arm before it where the queries are not
    /// known to be reset (with host reset, each copy resets what it read). `app_syncs`: the
    /// application's submission has a fence or signals a semaphore (a signalled-only batch
    /// then signals at once; otherwise it may leave its signal to a later submission).
    /// `submission`: the device's number of this call.
    pub fn prepare(
        &self,
        submission: u64,
        queue: vk::Queue,
        cmdbufs: impl Iterator<Item = vk::CommandBuffer>,
        can_split: bool,
        app_syncs: bool,
    ) -> Option<PendingSubmission> {
        let mut traces = TraceList::new();
        let mut submitted = CommandBufferList::new();
        // Where each segment's executions start in `traces`, after the first.
        let mut segment_starts: Vec<usize> = Vec::new();
        let mut splits = Vec::new();
        let mut armed = true;
        // Reusable traces whose last run this submission waited for (read here, or by
        // traceq meanwhile), and how long.
        let mut run_waits = RunWaits::default();
        // Reusable traces whose last run this submission saves (see `saves`).
        let mut to_save = ToSave::default();
        let order = self.queues.order(queue);
        for (position, cb) in cmdbufs.enumerate() {
            self.spare.push_command_buffer(&mut submitted, cb.as_raw());
            let Some(recorded) = self.submitted_trace(order, cb) else {
                continue;
            };
            // A command buffer that runs a second time in this call writes its queries
            // again: its first run's values are copied and its queries re-armed in
            // between, in a new segment.
            let current = &traces[segment_starts.last().copied().unwrap_or(0)..];
            if current.iter().any(|t| Arc::ptr_eq(t, &recorded)) {
                if !can_split {
                    log::debug!("command buffer {cb:?} runs twice in one protected or device-group submission; its second run is not timed");
                    self.stats
                        .dropped
                        .fetch_add(recorded.event_count(), Ordering::Relaxed);
                    continue;
                }
                splits.push(position);
                segment_starts.push(traces.len());
            }
            match recorded.take_armed_run(submission) {
                Taken::No => armed = false,
                Taken::Armed => {}
                Taken::ArmedAfterWait { waited_ns } => run_waits.add(false, waited_ns),
                Taken::ReadNow { waited_ns } => run_waits.add(true, waited_ns),
                Taken::Save => {
                    run_waits.saved();
                    to_save.push(traces.len());
                }
            }
            self.spare.push_trace(&mut traces, recorded);
        }
        // The layer gives up its part: the application's batches go down as they are
        // (see `submit_with`), and their runs write the queries they took.
        let give_back = |traces: TraceList, submitted| {
            for trace in &traces {
                trace.ran_untimed(submission);
            }
            self.spare.give(traces, submitted);
            None
        };
        // Nothing traced: only a submission that synchronises (a fence-only submit after a
        // burst, say) goes on, to signal for the batches of its queue left waiting, so that
        // they are written now rather than after a later submission.
        if traces.is_empty() && (!app_syncs || self.queues.indexed(queue).is_none()) {
            return give_back(traces, submitted);
        }
        let Some(queue_ctx) = self.queue_context(queue) else {
            return give_back(traces, submitted);
        };
        // Before the submission's own completion is taken: a save's value comes before it
        // (and is covered by its signal).
        let saves = self.saves(&queue_ctx, &traces, &to_save, submission);
        let signal_only = if traces.is_empty() {
            match queue_ctx.signal_for_waiting() {
                Some(completion) => Some((completion, true)),
                None => return give_back(traces, submitted),
            }
        } else if armed && splits.is_empty() {
            // A submission with saves signals: traceq waits for it to read them.
            queue_ctx.signal_only(app_syncs || !saves.is_empty())
        } else {
            None
        };
        if let Some((completion, signal)) = signal_only {
            for trace in &traces {
                trace.went(submission, true);
            }
            if !traces.is_empty() {
                queue_ctx.submissions.count(saves.is_empty(), run_waits);
            }
            return Some(PendingSubmission {
                queue: queue_ctx,
                traces,
                command_buffers: submitted,
                splits,
                waits: Vec::new(),
                rearm: false,
                resources: None,
                saves,
                completion,
                signal,
                frame: self.frame.load(Ordering::Relaxed),
                submission,
            });
        }
        let waits = cross_queue_waits(queue, &traces);
        // With host reset, queries are handed out reset and each copy resets what it read:
        // the next run on this queue needs no re-arm. A run that must wait for a copy on
        // another queue still gets one, which carries the wait.
        let reset_after_copy = self.chunks.resets_on_host();
        let arming = Arming {
            rearm: !reset_after_copy || !waits.is_empty(),
            reset_after_copy,
        };
        let wrap = self.wrap(&queue_ctx, &traces, &segment_starts, arming);
        match wrap {
            Ok(recorded) => {
                if let Some(e) = recorded.untimed {
                    self.fault("creating a readback buffer", e);
                }
                for trace in &traces {
                    trace.went(submission, false);
                }
                queue_ctx.submissions.count(false, run_waits);
                Some(PendingSubmission {
                    queue: queue_ctx,
                    traces,
                    command_buffers: submitted,
                    splits,
                    waits,
                    rearm: arming.rearm,
                    resources: Some(recorded.resources),
                    saves,
                    completion: recorded.completion,
                    signal: true,
                    frame: self.frame.load(Ordering::Relaxed),
                    submission,
                })
            }
            Err(e) => {
                self.fault("recording the layer's command buffers", e);
                give_back(traces, submitted)
            }
        }
    }

    /// The trace of `cb`, a command buffer of the current submission: found in the
    /// queue's `order` when the application submits as it did before, else looked up
    /// (and learnt by the order).
    #[inline]
    fn submitted_trace(
        &self,
        order: Option<&SubmitOrder>,
        cb: vk::CommandBuffer,
    ) -> Option<Arc<RecordedTrace>> {
        // SAFETY: the queue's submitting thread, for a command buffer of the application's
        // submission, executable (not being recorded, reset or freed) for the call.
        if let Some(found) = order.and_then(|o| unsafe { o.expected(cb.as_raw()) }) {
            return Some(found);
        }
        // SAFETY: as above.
        let recorded = unsafe { self.recorded(cb) }?;
        if let Some(order) = order {
            // SAFETY: as above.
            unsafe { order.learn(cb.as_raw(), &recorded) };
        }
        Some(recorded)
    }

    /// The layer's command buffers around `traces` (cut into segments at `segment_starts`)
    /// with `arming`. A reusable command buffer submitted alone (the common resubmission)
    /// finds those kept for its recording without building its segments.
    pub(super) fn wrap(
        &self,
        queue_ctx: &QueueContext,
        traces: &[Arc<RecordedTrace>],
        segment_starts: &[usize],
        arming: Arming,
    ) -> Result<RecordedWrap, vk::Result> {
        let alone = match traces {
            [only] if !only.one_time => Some(only),
            _ => None,
        };
        let kept = alone.and_then(|trace| {
            let fingerprint = trace.wrap_fingerprint(arming)?;
            self.backend
                .rerun_wrap(queue_ctx, trace.id, fingerprint, arming)
        });
        if let Some(kept) = kept {
            return Ok(kept);
        }
        SegmentLists::with(traces, segment_starts, |lists| {
            lists.segments(|segments| {
                let fingerprint = wrap_fingerprint(segments, lists.total(), arming);
                if let Some(trace) = alone {
                    trace.note_wrap_fingerprint(arming, fingerprint);
                }
                let recording = alone.map_or(0, |t| t.id);
                self.backend.prepare_wrap(
                    queue_ctx,
                    segments,
                    (lists.total(), arming),
                    fingerprint,
                    recording,
                )
            })
        })
    }

    /// After the submit call: a submitted batch goes to the traceq thread; a failed one gives
    /// its resources back (nothing of it was queued).
    /// `submit` is completed with the queue's anchor here (only a batch that goes needs one).
    pub fn commit(&self, pending: PendingSubmission, result: vk::Result, mut submit: SubmitStamp) {
        let PendingSubmission {
            queue,
            traces,
            command_buffers,
            resources,
            saves,
            completion,
            signal,
            frame,
            submission,
            ..
        } = pending;
        if result != vk::Result::SUCCESS {
            if let Some(resources) = resources {
                self.backend.recycle(&queue, resources);
            }
            for trace in &traces {
                trace.not_submitted(submission);
            }
            self.spare.give(traces, command_buffers);
            if result == vk::Result::ERROR_DEVICE_LOST {
                self.fault("vkQueueSubmit", result);
            }
            return;
        }
        if signal {
            queue.signal_made(&completion);
        }
        if traces.is_empty() {
            // It only signalled for earlier batches: nothing of its own to write.
            self.spare.give(traces, command_buffers);
            return;
        }
        let results = match resources {
            Some(resources) => {
                // A reusable trace may run again on another queue: its re-arm there must
                // follow this batch's copy.
                if let Completion::Timeline { semaphore, value } = completion {
                    let run = LastRun {
                        queue: queue.queue,
                        semaphore,
                        value,
                    };
                    for trace in &traces {
                        trace.visit(&mut |t| *t.last_run.lock() = Some(run));
                    }
                }
                Results::Copied(resources)
            }
            // One-time traces: they run nowhere else.
            None => Results::InQueries,
        };
        if !saves.is_empty() {
            for trace in &traces {
                trace.save_made(submission, completion);
            }
        }
        submit.anchor = queue.tick_anchor().for_stamp(submit.start);
        let captured = self.capture.active();
        let batch = Message::Batch(Batch {
            queue,
            traces,
            command_buffers,
            results: Some(results),
            spare: Arc::clone(&self.spare),
            completion,
            frame,
            submission,
            captured,
            submit,
        });
        if signal {
            self.consumer.send(batch);
        } else {
            // Nothing completes it before a later signal: it goes with that one.
            self.consumer.hold(batch);
        }
    }
}
