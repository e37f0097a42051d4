//! A batch (u_trace's flush): one traced submission on its way from `vkQueueSubmit*` to the
//! traceq thread.

use std::sync::Arc;

use parking_lot::Mutex;

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
    pub traces: Vec<Arc<RecordedTrace>>,
    /// Every command buffer the call submitted (instrumented or not), in order.
    pub command_buffers: Vec<u64>,
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

/// Lists kept for reuse beyond this many are freed. As many as batches are in flight in
/// the steady state: traceq lets a burst of submissions gather for a millisecond before it
/// wakes (`traceq::COALESCE`), and a list given back only then must not have been
/// allocated afresh for each submission of the burst (64 made every submission past the
/// 64th of a 100-submission burst allocate two lists). A spare pair holds a few words.
const SPARE: usize = 4096;

/// A batch's traces and command buffers.
type Lists = (Vec<Arc<RecordedTrace>>, Vec<u64>);

/// A batch's lists, recycled: a submission in the steady state allocates none.
#[derive(Default)]
pub struct SpareLists {
    lists: Mutex<Vec<Lists>>,
}

impl SpareLists {
    /// Two empty lists, with the room an earlier batch left them.
    pub fn take(&self) -> Lists {
        self.lists.lock().pop().unwrap_or_default()
    }

    pub fn give(&self, mut traces: Vec<Arc<RecordedTrace>>, mut command_buffers: Vec<u64>) {
        // The traces' references go before the lock is taken (a last one gives its chunks
        // back to the pool).
        traces.clear();
        command_buffers.clear();
        if traces.capacity() == 0 && command_buffers.capacity() == 0 {
            return;
        }
        let mut lists = self.lists.lock();
        if lists.len() < SPARE {
            lists.push((traces, command_buffers));
        }
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
}
