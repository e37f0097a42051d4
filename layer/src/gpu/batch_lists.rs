//! The lists the layer hands to the next layer's submit function: the application's
//! batches framed by the layer's, and the application's command buffer lists with the
//! layer's inserted where a segment starts. Written once for both kinds of batch
//! (`VkSubmitInfo`, `VkSubmitInfo2`, see [`Batch`]).

use ash::vk;

use super::segments::SegmentCommands;
use smallvec::SmallVec;

/// The command buffer lists of batches with the layer's inserted at the splits: before the
/// command buffer at position `splits[k]`, segment k's copy and (with `rearm`) segment
/// k+1's re-arm.
pub fn with_insertions<T: Copy>(
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

/// Saves of runs left in the queries (see `trace::record::reruns`) one submission carries
/// on the stack; more take an allocation.
pub const MAX_SAVES: usize = 4;

/// The list of the batch before the application's: the saves of runs left in the queries,
/// then the first segment's re-arm where it runs (on the stack up to [`MAX_SAVES`] saves).
pub fn head_list<T>(
    saves: &[vk::CommandBuffer],
    rearm: Option<T>,
    item: impl Fn(vk::CommandBuffer) -> T,
) -> SmallVec<[T; MAX_SAVES + 1]> {
    let mut list = SmallVec::new();
    for &cb in saves {
        list.push(item(cb));
    }
    if let Some(rearm) = rearm {
        list.push(rearm);
    }
    list
}

/// Batches per call kept on the stack (more take an allocation).
const INLINE_BATCHES: usize = 8;

/// Calls `f` with `[head] + app + [tail]`, on the stack when it fits.
pub fn framed<T: Copy, R>(head: Option<T>, app: &[T], tail: T, f: impl FnOnce(&[T]) -> R) -> R {
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

/// A batch of `vkQueueSubmit` (`VkSubmitInfo`) or of `vkQueueSubmit2` (`VkSubmitInfo2`):
/// how its list of command buffers is read and replaced, so that `wrapped_submit` serves both with one function.
pub trait Batch: Copy {
    /// One entry of the batch's list of command buffers.
    type Item: Copy;
    /// The entry for one of the layer's command buffers.
    fn item(cb: vk::CommandBuffer) -> Self::Item;
    /// The batch's list.
    ///
    /// # Safety
    /// The batch's count and pointer describe a valid array.
    unsafe fn items(&self) -> &[Self::Item];
    /// The batch with `items` as its list.
    fn with_items(self, items: &[Self::Item]) -> Self;
}

impl Batch for vk::SubmitInfo<'_> {
    type Item = vk::CommandBuffer;

    fn item(cb: vk::CommandBuffer) -> vk::CommandBuffer {
        cb
    }

    unsafe fn items(&self) -> &[vk::CommandBuffer] {
        // SAFETY: the caller's promise.
        unsafe { crate::ffi::slice(self.p_command_buffers, self.command_buffer_count) }
    }

    fn with_items(mut self, items: &[vk::CommandBuffer]) -> Self {
        self.command_buffer_count = items.len() as u32;
        self.p_command_buffers = items.as_ptr();
        self
    }
}

impl<'a> Batch for vk::SubmitInfo2<'a> {
    type Item = vk::CommandBufferSubmitInfo<'a>;

    fn item(cb: vk::CommandBuffer) -> vk::CommandBufferSubmitInfo<'a> {
        vk::CommandBufferSubmitInfo::default().command_buffer(cb)
    }

    unsafe fn items(&self) -> &[vk::CommandBufferSubmitInfo<'a>] {
        // SAFETY: the caller's promise.
        unsafe { crate::ffi::slice(self.p_command_buffer_infos, self.command_buffer_info_count) }
    }

    fn with_items(mut self, items: &[vk::CommandBufferSubmitInfo<'a>]) -> Self {
        self.command_buffer_info_count = items.len() as u32;
        self.p_command_buffer_infos = items.as_ptr();
        self
    }
}

/// The layer's batches for one submission, of either kind.
pub struct LayerBatches<S> {
    /// Before the application's ([`head_list`]), with the waits for other queues' copies;
    /// `None` when nothing runs before them.
    pub head: Option<S>,
    /// After them: the last segment's copy, signalling the completion's timeline value.
    pub copy: S,
    /// After them when the batch is only signalled: an empty batch that signals.
    pub signal_only: S,
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
    fn saves_go_before_the_first_rearm_in_one_list() {
        let rearm = cb(9);
        assert!(head_list(&[], None, |c| c).as_slice().is_empty());
        assert_eq!(head_list(&[], Some(rearm), |c| c).as_slice(), [rearm]);
        let saves = [cb(1), cb(2)];
        assert_eq!(
            head_list(&saves, Some(rearm), |c| c).as_slice(),
            [cb(1), cb(2), cb(9)]
        );
        assert_eq!(head_list(&saves, None, |c| c).as_slice(), saves);
        let many = [cb(1), cb(2), cb(3), cb(4), cb(5), cb(6)];
        assert_eq!(
            head_list(&many, Some(rearm), |c| c).as_slice(),
            [cb(1), cb(2), cb(3), cb(4), cb(5), cb(6), cb(9)]
        );
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
