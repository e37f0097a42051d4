//! A batch (u_trace's flush): one traced submission on its way from `vkQueueSubmit*` to the
//! traceq thread.

use std::sync::Arc;

use parking_lot::Mutex;
use smallvec::SmallVec;

use crate::gpu::interface::cpu_ticks::{self, TickPair};
use crate::gpu::interface::{BatchResources, Completion, QueueContext};
use crate::trace::record::recorded_trace::RecordedTrace;

/// Where a batch's timestamps are read once it completed.
pub enum Results {
    /// Copied by the layer's command buffers into the resources' readback buffer.
    Copied(BatchResources),
    /// Left in the queries (reset on the host, written once): read with
    /// `vkGetQueryPoolResults`.
    InQueries,
}

pub struct Batch {
    pub queue: Arc<QueueContext>,
    /// The submitted command buffers' traces, in submission order.
    pub traces: TraceList,
    /// Every command buffer the call submitted (instrumented or not), in order.
    pub command_buffers: CommandBufferList,
    /// Taken by the traceq thread once the batch completed; a batch dropped before that
    /// (device lost, given up at exit) leaves its resources to be destroyed with the device.
    pub results: Option<Results>,
    /// Where the two lists go back when the batch is done with.
    pub spare: Arc<SpareLists>,
    pub completion: Completion,
    /// The frame current when it was submitted (frames end at `vkQueuePresentKHR`).
    pub frame: u32,
    /// The device's submission counter value of this `vkQueueSubmit*` call.
    pub submission: u64,
    /// Submitted while a capture was active: written. Otherwise the batch only re-arms
    /// and completes (instrumented command buffers submitted outside a capture).
    pub captured: bool,
    /// The submit call on the CPU (Perfetto's `vk_queue_submit`), in counter ticks.
    pub submit: SubmitStamp,
}

/// When and where a `vkQueueSubmit*` call ran on the CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubmitTiming {
    /// `CLOCK_BOOTTIME` nanoseconds at the call's start (Perfetto's default trace clock).
    pub start_ns: u64,
    pub duration_ns: u64,
    pub tid: u32,
}

/// When and where a `vkQueueSubmit*` call ran, as the submitting thread saw it: counter
/// ticks (see `gpu::cpu_ticks`), placed on `CLOCK_BOOTTIME` by traceq.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubmitStamp {
    /// The counter at the call's start, and after it (0: not read, the duration is not shown).
    pub start: u64,
    pub end: u64,
    /// The queue's anchor for `start`.
    pub anchor: TickPair,
    pub tid: u32,
}

impl SubmitStamp {
    /// The call on `CLOCK_BOOTTIME`, `later` being a pair read after it.
    pub fn placed(&self, later: TickPair) -> SubmitTiming {
        let start_ns = cpu_ticks::place(self.start, self.anchor, later);
        let duration_ns = if self.end == 0 {
            0
        } else {
            cpu_ticks::place(self.end, self.anchor, later).saturating_sub(start_ns)
        };
        SubmitTiming {
            start_ns,
            duration_ns,
            tid: self.tid,
        }
    }
}

impl Batch {
    /// Events this batch carries (for the dropped-events count).
    pub fn event_count(&self) -> u64 {
        self.traces.iter().map(|t| t.event_count()).sum()
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        if let Some(Results::Copied(res)) = self.results.take() {
            self.queue.abandon(res);
        }
        self.spare.give(
            std::mem::take(&mut self.traces),
            std::mem::take(&mut self.command_buffers),
        );
    }
}

/// Command buffers a submission's lists hold in the batch itself; beyond, they move to
/// recycled heap lists ([`SpareLists`]). Lists of their own on the heap, recycled through a
/// pool, cost a resubmission two cache misses (17% of the submit path's samples 3 ms after
/// the last submission, measured with `perf annotate`).
const INLINE: usize = 4;

/// A batch's traces, in the batch up to [`INLINE`].
pub type TraceList = SmallVec<[Arc<RecordedTrace>; INLINE]>;
/// A batch's command buffers, in the batch up to [`INLINE`].
pub type CommandBufferList = SmallVec<[u64; INLINE]>;

/// Heap lists kept for reuse beyond this many are freed. As many as batches of more than
/// [`INLINE`] command buffers are in flight in the steady state: traceq lets a burst of
/// submissions gather for a millisecond before it wakes (`traceq::COALESCE`), and a list
/// given back only then must not have been allocated afresh for each submission of the
/// burst (64 made every submission past the 64th of a 100-submission burst allocate two
/// lists). A spare list holds a few words.
const SPARE: usize = 4096;

/// Room of a heap list made afresh: more than [`INLINE`], so that it stays on the heap.
const FIRST_ROOM: usize = 4 * INLINE;

/// The heap lists of batches that outgrew their inline room, recycled: a submission in the
/// steady state allocates none, whatever its size.
#[derive(Default)]
pub struct SpareLists {
    traces: Mutex<Vec<Vec<Arc<RecordedTrace>>>>,
    command_buffers: Mutex<Vec<Vec<u64>>>,
}

impl SpareLists {
    /// Adds `trace` to `list`, moving it to a recycled heap list when it outgrows its room.
    pub fn push_trace(&self, list: &mut TraceList, trace: Arc<RecordedTrace>) {
        push(&self.traces, list, trace);
    }

    /// Adds `cb` to `list`, as [`Self::push_trace`].
    pub fn push_command_buffer(&self, list: &mut CommandBufferList, cb: u64) {
        push(&self.command_buffers, list, cb);
    }

    /// Takes a batch's lists back: heap ones are kept for a later batch.
    pub fn give(&self, traces: TraceList, command_buffers: CommandBufferList) {
        // The traces' references go before the lock is taken (a last one gives its chunks
        // back to the pool).
        keep(&self.traces, traces);
        keep(&self.command_buffers, command_buffers);
    }
}

/// Pushes `item`; a full inline `list` first moves to a heap list from `spare`.
fn push<T>(spare: &Mutex<Vec<Vec<T>>>, list: &mut SmallVec<[T; INLINE]>, item: T) {
    if list.len() == INLINE && !list.spilled() {
        let taken = spare.lock().pop();
        let mut heap = taken.unwrap_or_else(|| Vec::with_capacity(FIRST_ROOM));
        heap.extend(list.drain(..));
        *list = SmallVec::from_vec(heap);
    }
    list.push(item);
}

/// Keeps `list`'s heap room, emptied, in `spare`; an inline list is only emptied.
fn keep<T>(spare: &Mutex<Vec<Vec<T>>>, list: SmallVec<[T; INLINE]>) {
    if !list.spilled() {
        return;
    }
    let mut heap = list.into_vec();
    heap.clear();
    let mut spare = spare.lock();
    if spare.len() < SPARE {
        spare.push(heap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_is_placed_with_its_duration_only_when_its_end_was_read() {
        // 2 ticks a nanosecond from the anchor.
        let anchor = TickPair {
            ticks: 1_000,
            boot_ns: 10_000,
        };
        let later = TickPair {
            ticks: 21_000,
            boot_ns: 20_000,
        };
        let mut stamp = SubmitStamp {
            start: 3_000,
            end: 3_600,
            anchor,
            tid: 7,
        };
        let placed = stamp.placed(later);
        assert_eq!(
            placed,
            SubmitTiming {
                start_ns: 11_000,
                duration_ns: 300,
                tid: 7
            }
        );
        stamp.end = 0;
        assert_eq!(stamp.placed(later).duration_ns, 0, "not timed: no duration");
    }

    #[test]
    fn lists_stay_in_the_batch_up_to_their_room_and_reuse_heap_room_beyond() {
        let spare = SpareLists::default();
        let mut cbs = CommandBufferList::new();
        for cb in 1..=INLINE as u64 {
            spare.push_command_buffer(&mut cbs, cb);
        }
        assert!(!cbs.spilled(), "{INLINE} fit in the batch");
        spare.push_command_buffer(&mut cbs, 5);
        assert!(cbs.spilled());
        assert_eq!(cbs.as_slice(), [1, 2, 3, 4, 5], "in order across the move");
        let room = cbs.as_ptr();
        spare.give(TraceList::new(), cbs);
        let mut again = CommandBufferList::new();
        for cb in 1..=6 {
            spare.push_command_buffer(&mut again, cb);
        }
        assert_eq!(
            again.as_ptr(),
            room,
            "the heap room given back, not a new one"
        );
        assert_eq!(again.as_slice(), [1, 2, 3, 4, 5, 6]);
        // An inline list gives nothing back: a later spill makes its own room.
        spare.give(TraceList::new(), CommandBufferList::new());
        assert!(spare.command_buffers.lock().is_empty());
    }
}
