//! The application's submission, wrapped: `[re-arm] + the application's batches + [copy]`
//! in one call (the re-arm only where the queries are not reset already), so that the
//! application's fence also covers the layer's copy. Saves of runs left in the queries
//! (see `trace::record::reruns`) go first, in the re-arm's batch. The
//! application's own `VkSubmitInfo`s are passed through untouched, except where a command
//! buffer runs twice in one call: there the layer's copy and re-arm command buffers are
//! inserted into the batch's list, before the second run. In timeline mode the copy batch
//! signals the queue's timeline semaphore; in fence mode an empty submission with the
//! layer's fence follows (it signals once everything before it on the queue has completed).

use ash::vk;

use super::batch_lists::{framed, head_list, with_insertions, Batch, LayerBatches};
use super::completion::Completion;
use super::segments::SegmentCommands;
use crate::loader::dispatch::DeviceDispatch;

/// The layer's command buffers of one traced submission.
pub struct Wrapping<'a> {
    /// Re-arm and copy per segment; none when the batch is only signalled (timeline mode).
    pub segments: &'a [SegmentCommands],
    /// Copies of runs left in the queries by earlier submissions, which run before
    /// everything else (they reset the queries they copy).
    pub saves: &'a [vk::CommandBuffer],
    /// Where segments 1.. start, as positions among the submitted command buffers.
    pub splits: &'a [usize],
    /// Timeline values of other queues' copies the first re-arm waits for.
    pub waits: &'a [(vk::Semaphore, u64)],
    /// Whether each segment's re-arm runs before it (otherwise only the copies run; their
    /// queries are reset already).
    pub rearm: bool,
    pub completion: Completion,
    /// Whether this submission signals `completion`'s timeline value; a batch that needs
    /// nothing else of the layer's may leave that to a later one (`timeline_signals`).
    pub signal: bool,
}

/// The application's batches `app` with the layer's, handed to `submit` (the next layer's
/// `vkQueueSubmit` or `vkQueueSubmit2`).
///
/// # Safety
/// `app` is the application's valid batches; `submit` calls the next layer's function with
/// the application's queue and fence.
unsafe fn wrapped<S: Batch>(
    d: &DeviceDispatch,
    queue: vk::Queue,
    app: &[S],
    wrap: &Wrapping<'_>,
    layer: LayerBatches<S>,
    submit: impl Fn(&[S]) -> vk::Result,
) -> vk::Result {
    if wrap.segments.is_empty() {
        // Signal only (`passes_through` took the calls that signal nothing): the
        // application's batches untouched (after the saves), then the timeline's signal.
        let result = framed(layer.head, app, layer.signal_only, &submit);
        // SAFETY: the application's queue, inside its submit call.
        return unsafe { completed_by_fence(d, queue, wrap, result) };
    }
    let result = if wrap.splits.is_empty() {
        // The application's batches, untouched, between the layer's.
        framed(layer.head, app, layer.copy, &submit)
    } else {
        // SAFETY: each of the application's batches holds a valid list.
        let app_lists: Vec<&[S::Item]> = app.iter().map(|s| unsafe { s.items() }).collect();
        let lists = with_insertions(&app_lists, wrap.splits, wrap.segments, wrap.rearm, S::item);
        let split: Vec<S> = app
            .iter()
            .zip(&lists)
            .map(|(info, list)| info.with_items(list))
            .collect();
        // The application's batches, unchanged but for the layer's command buffers inserted
        // at the splits; the layer's reference live objects.
        framed(layer.head, &split, layer.copy, &submit)
    };
    // SAFETY: the application's queue, inside its submit call.
    unsafe { completed_by_fence(d, queue, wrap, result) }
}

/// # Safety
/// The application's arguments must be valid for `vkQueueSubmit`, and `next` the next
/// layer's function.
pub unsafe fn queue_submit(
    d: &DeviceDispatch,
    next: vk::PFN_vkQueueSubmit,
    queue: vk::Queue,
    app_submits: &[vk::SubmitInfo<'_>],
    fence: vk::Fence,
    wrap: &Wrapping<'_>,
) -> vk::Result {
    if passes_through(wrap) {
        // SAFETY: the application's arguments, as they are.
        return unsafe { next(queue, app_submits.len() as u32, app_submits.as_ptr(), fence) };
    }
    let (signal, value) = match wrap.completion {
        Completion::Timeline { semaphore, value } => (semaphore, value),
        Completion::Fence(_) => (vk::Semaphore::null(), 0),
    };
    let mut signal_only_timeline = vk::TimelineSemaphoreSubmitInfo::default()
        .signal_semaphore_values(std::slice::from_ref(&value));
    let mut copy_timeline = signal_only_timeline;
    let signal_only = vk::SubmitInfo::default()
        .signal_semaphores(std::slice::from_ref(&signal))
        .push_next(&mut signal_only_timeline);
    let (rearm_cb, copy_cb) = first_and_last(wrap);
    let wait_semaphores: Vec<vk::Semaphore> = wrap.waits.iter().map(|w| w.0).collect();
    let wait_values: Vec<u64> = wrap.waits.iter().map(|w| w.1).collect();
    let wait_stages = vec![vk::PipelineStageFlags::TRANSFER; wrap.waits.len()];
    let mut wait_info =
        vk::TimelineSemaphoreSubmitInfo::default().wait_semaphore_values(&wait_values);
    let head_cbs = head_list(wrap.saves, runs_rearm(wrap).then_some(rearm_cb), |c| c);
    let mut head = vk::SubmitInfo::default().command_buffers(head_cbs.as_slice());
    if !wrap.waits.is_empty() {
        head = head
            .wait_semaphores(&wait_semaphores)
            .wait_dst_stage_mask(&wait_stages)
            .push_next(&mut wait_info);
    }
    let mut copy = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&copy_cb));
    if signal != vk::Semaphore::null() {
        copy = copy
            .signal_semaphores(std::slice::from_ref(&signal))
            .push_next(&mut copy_timeline);
    }
    let layer = LayerBatches {
        head: (!head_cbs.as_slice().is_empty()).then_some(head),
        copy,
        signal_only,
    };
    // SAFETY: the application's batches (and the layer's, which reference live objects), its
    // queue and fence.
    let submit =
        |all: &[vk::SubmitInfo<'_>]| unsafe { next(queue, all.len() as u32, all.as_ptr(), fence) };
    // SAFETY: as above.
    unsafe { wrapped(d, queue, app_submits, wrap, layer, submit) }
}

/// # Safety
/// The application's arguments must be valid for `vkQueueSubmit2`, and `submit2` the next
/// layer's function.
pub unsafe fn queue_submit2(
    d: &DeviceDispatch,
    submit2: vk::PFN_vkQueueSubmit2,
    queue: vk::Queue,
    app_submits: &[vk::SubmitInfo2<'_>],
    fence: vk::Fence,
    wrap: &Wrapping<'_>,
) -> vk::Result {
    if passes_through(wrap) {
        // SAFETY: the application's arguments, as they are.
        return unsafe { submit2(queue, app_submits.len() as u32, app_submits.as_ptr(), fence) };
    }
    let signal = match wrap.completion {
        Completion::Timeline { semaphore, value } => Some(
            vk::SemaphoreSubmitInfo::default()
                .semaphore(semaphore)
                .value(value)
                .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS),
        ),
        Completion::Fence(_) => None,
    };
    let signal_only = vk::SubmitInfo2::default().signal_semaphore_infos(signal.as_slice());
    let (rearm_cb, copy_cb) = first_and_last(wrap);
    let rearm_cb = vk::CommandBufferSubmitInfo::default().command_buffer(rearm_cb);
    let copy_cb = vk::CommandBufferSubmitInfo::default().command_buffer(copy_cb);
    let waits: Vec<vk::SemaphoreSubmitInfo<'_>> = wrap
        .waits
        .iter()
        .map(|&(semaphore, value)| {
            vk::SemaphoreSubmitInfo::default()
                .semaphore(semaphore)
                .value(value)
                .stage_mask(vk::PipelineStageFlags2::ALL_TRANSFER)
        })
        .collect();
    let head_cbs = head_list(
        wrap.saves,
        runs_rearm(wrap).then_some(rearm_cb),
        <vk::SubmitInfo2<'_> as Batch>::item,
    );
    let head = vk::SubmitInfo2::default()
        .command_buffer_infos(head_cbs.as_slice())
        .wait_semaphore_infos(&waits);
    let copy = vk::SubmitInfo2::default()
        .command_buffer_infos(std::slice::from_ref(&copy_cb))
        .signal_semaphore_infos(signal.as_slice());
    let layer = LayerBatches {
        head: (!head_cbs.as_slice().is_empty()).then_some(head),
        copy,
        signal_only,
    };
    // SAFETY: as in `queue_submit`; `submit2` is the next layer's function.
    let submit = |all: &[vk::SubmitInfo2<'_>]| unsafe {
        submit2(queue, all.len() as u32, all.as_ptr(), fence)
    };
    // SAFETY: as above.
    unsafe { wrapped(d, queue, app_submits, wrap, layer, submit) }
}

/// Whether the application's call goes down as it is: nothing of the layer's, and a later
/// submission signals this batch's value (most small submissions: nothing to build).
fn passes_through(wrap: &Wrapping<'_>) -> bool {
    wrap.segments.is_empty() && wrap.saves.is_empty() && !wrap.signal
}

/// Whether the first segment's re-arm runs before the application's batches.
fn runs_rearm(wrap: &Wrapping<'_>) -> bool {
    wrap.rearm && !wrap.segments.is_empty()
}

/// The first segment's re-arm and the last segment's copy (null when the batch is only
/// signalled: there are no segments, and neither is submitted).
fn first_and_last(wrap: &Wrapping<'_>) -> (vk::CommandBuffer, vk::CommandBuffer) {
    match (wrap.segments.first(), wrap.segments.last()) {
        (Some(first), Some(last)) => (first.rearm, last.copy),
        _ => (vk::CommandBuffer::null(), vk::CommandBuffer::null()),
    }
}

/// After a successful submission in fence mode, an empty submission whose fence signals
/// when the batch (and everything before it on the queue) has completed. Returns the
/// application's result.
///
/// # Safety
/// `queue` is externally synchronised by the application during its submit call.
unsafe fn completed_by_fence(
    d: &DeviceDispatch,
    queue: vk::Queue,
    wrap: &Wrapping<'_>,
    result: vk::Result,
) -> vk::Result {
    if result != vk::Result::SUCCESS {
        return result;
    }
    if let Completion::Fence(fence) = wrap.completion {
        // SAFETY: the fence is unsignalled and owned by this batch.
        let r = unsafe { (d.fp_v1_0.queue_submit)(queue, 0, std::ptr::null(), fence) };
        if r != vk::Result::SUCCESS {
            log::error!("could not submit the layer's completion fence: {r}");
        }
    }
    result
}
