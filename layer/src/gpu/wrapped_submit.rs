//! The application's submission, wrapped: `[re-arm] + the application's batches + [copy]`
//! in one call (the re-arm only where the queries are not reset already), so that the
//! application's fence also covers the layer's copy. The
//! application's own `VkSubmitInfo`s are passed through untouched, except where a command
//! buffer runs twice in one call: there the layer's copy and re-arm command buffers are
//! inserted into the batch's list, before the second run. In timeline mode the copy batch
//! signals the queue's timeline semaphore; in fence mode an empty submission with the
//! layer's fence follows (it signals once everything before it on the queue has completed).

use ash::vk;

use super::completion::Completion;
use super::segments::SegmentCommands;
use crate::loader::dispatch::DeviceDispatch;

/// The layer's command buffers of one traced submission.
pub struct Wrapping<'a> {
    /// Re-arm and copy per segment; none when the batch is only signalled (timeline mode).
    pub segments: &'a [SegmentCommands],
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

/// Whether the layer may insert command buffers into these batches: not into protected
/// batches (its command buffers are not protected) nor where a device group gives each
/// command buffer a device mask.
pub fn splittable(submits: &[vk::SubmitInfo<'_>]) -> bool {
    submits.iter().all(|s| {
        let mut next = s.p_next.cast::<vk::BaseInStructure>();
        while !next.is_null() {
            // SAFETY: a valid chain of the application's; each element starts with
            // sType/pNext, and the protected info is read as its own type.
            unsafe {
                match (*next).s_type {
                    vk::StructureType::DEVICE_GROUP_SUBMIT_INFO => return false,
                    vk::StructureType::PROTECTED_SUBMIT_INFO
                        if (*next.cast::<vk::ProtectedSubmitInfo>()).protected_submit
                            == vk::TRUE =>
                    {
                        return false
                    }
                    _ => {}
                }
                next = (*next).p_next;
            }
        }
        true
    })
}

/// As [`splittable`], for `vkQueueSubmit2`.
pub fn splittable2(submits: &[vk::SubmitInfo2<'_>]) -> bool {
    submits
        .iter()
        .all(|s| !s.flags.contains(vk::SubmitFlags::PROTECTED))
}

/// The command buffer lists of batches with the layer's inserted at the splits: before the
/// command buffer at position `splits[k]`, segment k's copy and (with `rearm`) segment
/// k+1's re-arm.
fn with_insertions<T: Copy>(
    lists: &[&[T]],
    splits: &[usize],
    segments: &[SegmentCommands],
    rearm: bool,
    layer: impl Fn(vk::CommandBuffer) -> T,
) -> Vec<Vec<T>> {
    let mut position = 0;
    let mut next_split = 0;
    lists
        .iter()
        .map(|list| {
            let mut out = Vec::with_capacity(list.len() + 2);
            for &item in *list {
                if splits.get(next_split) == Some(&position) {
                    out.push(layer(segments[next_split].copy));
                    if rearm {
                        out.push(layer(segments[next_split + 1].rearm));
                    }
                    next_split += 1;
                }
                out.push(item);
                position += 1;
            }
            out
        })
        .collect()
}

/// Batches per call kept on the stack (more take an allocation).
const INLINE_BATCHES: usize = 8;

/// Calls `f` with `[head] + app + [tail]`, on the stack when it fits.
fn framed<T: Copy, R>(head: Option<T>, app: &[T], tail: T, f: impl FnOnce(&[T]) -> R) -> R {
    let len = usize::from(head.is_some()) + app.len() + 1;
    let fill = |out: &mut [T]| {
        let mut n = 0;
        if let Some(head) = head {
            out[0] = head;
            n = 1;
        }
        out[n..n + app.len()].copy_from_slice(app);
        out[len - 1] = tail;
    };
    if len <= INLINE_BATCHES {
        let mut buf = [tail; INLINE_BATCHES];
        fill(&mut buf[..len]);
        f(&buf[..len])
    } else {
        let mut buf = vec![tail; len];
        fill(&mut buf);
        f(&buf)
    }
}

/// # Safety
/// The application's arguments must be valid for `vkQueueSubmit`.
pub unsafe fn queue_submit(
    d: &DeviceDispatch,
    queue: vk::Queue,
    app_submits: &[vk::SubmitInfo<'_>],
    fence: vk::Fence,
    wrap: &Wrapping<'_>,
) -> vk::Result {
    let (signal, value) = match wrap.completion {
        Completion::Timeline { semaphore, value } => (semaphore, value),
        Completion::Fence(_) => (vk::Semaphore::null(), 0),
    };
    let mut timeline_info = vk::TimelineSemaphoreSubmitInfo::default()
        .signal_semaphore_values(std::slice::from_ref(&value));
    let (first, last) = match (wrap.segments.first(), wrap.segments.last()) {
        (Some(first), Some(last)) => (*first, *last),
        _ if !wrap.signal => {
            // A later submission signals this batch's value: the application's call as it is.
            // SAFETY: the application's arguments.
            return unsafe {
                (d.fp_v1_0.queue_submit)(
                    queue,
                    app_submits.len() as u32,
                    app_submits.as_ptr(),
                    fence,
                )
            };
        }
        _ => {
            // Signal only: the application's batches, then the timeline's signal.
            let tail = vk::SubmitInfo::default()
                .signal_semaphores(std::slice::from_ref(&signal))
                .push_next(&mut timeline_info);
            // SAFETY: the application's batches untouched, and an empty batch of the layer's.
            let result = framed(None, app_submits, tail, |all| unsafe {
                (d.fp_v1_0.queue_submit)(queue, all.len() as u32, all.as_ptr(), fence)
            });
            // SAFETY: as above.
            return unsafe { completed_by_fence(d, queue, wrap, result) };
        }
    };
    let wait_semaphores: Vec<vk::Semaphore> = wrap.waits.iter().map(|w| w.0).collect();
    let wait_values: Vec<u64> = wrap.waits.iter().map(|w| w.1).collect();
    let wait_stages = vec![vk::PipelineStageFlags::TRANSFER; wrap.waits.len()];
    let mut wait_info =
        vk::TimelineSemaphoreSubmitInfo::default().wait_semaphore_values(&wait_values);
    let mut rearm = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&first.rearm));
    if !wrap.waits.is_empty() {
        rearm = rearm
            .wait_semaphores(&wait_semaphores)
            .wait_dst_stage_mask(&wait_stages)
            .push_next(&mut wait_info);
    }
    let mut copy = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&last.copy));
    if signal != vk::Semaphore::null() {
        copy = copy
            .signal_semaphores(std::slice::from_ref(&signal))
            .push_next(&mut timeline_info);
    }
    let result = if wrap.splits.is_empty() {
        // SAFETY: the application's batches, untouched, between the layer's.
        framed(
            wrap.rearm.then_some(rearm),
            app_submits,
            copy,
            |all| unsafe { (d.fp_v1_0.queue_submit)(queue, all.len() as u32, all.as_ptr(), fence) },
        )
    } else {
        // SAFETY: each batch holds `command_buffer_count` command buffers.
        let app_lists: Vec<&[vk::CommandBuffer]> = app_submits
            .iter()
            .map(|s| unsafe { crate::ffi::slice(s.p_command_buffers, s.command_buffer_count) })
            .collect();
        let lists = with_insertions(&app_lists, wrap.splits, wrap.segments, wrap.rearm, |cb| cb);
        let split: Vec<vk::SubmitInfo<'_>> = app_submits
            .iter()
            .zip(&lists)
            .map(|(info, list)| {
                let mut info = *info;
                info.command_buffer_count = list.len() as u32;
                info.p_command_buffers = list.as_ptr();
                info
            })
            .collect();
        // SAFETY: the application's batches, unchanged but for the layer's command buffers
        // inserted at the splits; the layer's reference live objects.
        framed(wrap.rearm.then_some(rearm), &split, copy, |all| unsafe {
            (d.fp_v1_0.queue_submit)(queue, all.len() as u32, all.as_ptr(), fence)
        })
    };
    // SAFETY: as above.
    unsafe { completed_by_fence(d, queue, wrap, result) }
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
    let signal = match wrap.completion {
        Completion::Timeline { semaphore, value } => Some(
            vk::SemaphoreSubmitInfo::default()
                .semaphore(semaphore)
                .value(value)
                .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS),
        ),
        Completion::Fence(_) => None,
    };
    let (first, last) = match (wrap.segments.first(), wrap.segments.last()) {
        (Some(first), Some(last)) => (*first, *last),
        _ if !wrap.signal => {
            // As in `queue_submit`: the application's call as it is.
            // SAFETY: the application's arguments; `submit2` is the next layer's function.
            return unsafe {
                submit2(queue, app_submits.len() as u32, app_submits.as_ptr(), fence)
            };
        }
        _ => {
            // Signal only: the application's batches, then the timeline's signal.
            let tail = vk::SubmitInfo2::default().signal_semaphore_infos(signal.as_slice());
            // SAFETY: the application's batches untouched, and an empty batch of the layer's.
            let result = framed(None, app_submits, tail, |all| unsafe {
                submit2(queue, all.len() as u32, all.as_ptr(), fence)
            });
            // SAFETY: as above.
            return unsafe { completed_by_fence(d, queue, wrap, result) };
        }
    };
    let rearm_cb = vk::CommandBufferSubmitInfo::default().command_buffer(first.rearm);
    let copy_cb = vk::CommandBufferSubmitInfo::default().command_buffer(last.copy);
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
    let rearm = vk::SubmitInfo2::default()
        .command_buffer_infos(std::slice::from_ref(&rearm_cb))
        .wait_semaphore_infos(&waits);
    let copy = vk::SubmitInfo2::default()
        .command_buffer_infos(std::slice::from_ref(&copy_cb))
        .signal_semaphore_infos(signal.as_slice());
    let result = if wrap.splits.is_empty() {
        // SAFETY: as in `queue_submit`.
        framed(
            wrap.rearm.then_some(rearm),
            app_submits,
            copy,
            |all| unsafe { submit2(queue, all.len() as u32, all.as_ptr(), fence) },
        )
    } else {
        // SAFETY: each batch holds `command_buffer_info_count` infos.
        let app_lists: Vec<&[vk::CommandBufferSubmitInfo<'_>]> = app_submits
            .iter()
            .map(|s| unsafe {
                crate::ffi::slice(s.p_command_buffer_infos, s.command_buffer_info_count)
            })
            .collect();
        let lists = with_insertions(&app_lists, wrap.splits, wrap.segments, wrap.rearm, |cb| {
            vk::CommandBufferSubmitInfo::default().command_buffer(cb)
        });
        let split: Vec<vk::SubmitInfo2<'_>> = app_submits
            .iter()
            .zip(&lists)
            .map(|(info, list)| {
                let mut info = *info;
                info.command_buffer_info_count = list.len() as u32;
                info.p_command_buffer_infos = list.as_ptr();
                info
            })
            .collect();
        // SAFETY: as in `queue_submit`.
        framed(wrap.rearm.then_some(rearm), &split, copy, |all| unsafe {
            submit2(queue, all.len() as u32, all.as_ptr(), fence)
        })
    };
    // SAFETY: as above.
    unsafe { completed_by_fence(d, queue, wrap, result) }
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

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    fn cb(n: u64) -> vk::CommandBuffer {
        vk::CommandBuffer::from_raw(n)
    }

    #[test]
    fn framing_puts_the_layers_batches_around_the_applications() {
        for app_len in [0usize, 1, 6, 7, 20] {
            let app: Vec<u32> = (1..=app_len as u32).collect();
            let with_head = framed(Some(100), &app, 200, |all| all.to_vec());
            let mut want = vec![100];
            want.extend(&app);
            want.push(200);
            assert_eq!(with_head, want);
            let tail_only = framed(None, &app, 200, |all| all.to_vec());
            assert_eq!(tail_only, want[1..]);
        }
    }

    #[test]
    fn insertions_go_before_each_second_run_across_batches() {
        let segments: Vec<SegmentCommands> = (0..3)
            .map(|k| SegmentCommands {
                rearm: cb(100 + k),
                copy: cb(200 + k),
            })
            .collect();
        // Batches [A B] [A C B]: segment 1 starts at position 2 (A again), segment 2 at
        // position 4 (B again).
        let a = [cb(1), cb(2)];
        let b = [cb(1), cb(3), cb(2)];
        let lists = with_insertions(&[&a[..], &b[..]], &[2, 4], &segments, true, |c| c);
        assert_eq!(lists[0], vec![cb(1), cb(2)]);
        assert_eq!(
            lists[1],
            vec![cb(200), cb(101), cb(1), cb(3), cb(201), cb(102), cb(2)]
        );
        // Queries reset by each copy: only the copies go in.
        let lists = with_insertions(&[&a[..], &b[..]], &[2, 4], &segments, false, |c| c);
        assert_eq!(lists[1], vec![cb(200), cb(1), cb(3), cb(201), cb(2)]);
    }
}
