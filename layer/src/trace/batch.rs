//! A batch (u_trace's flush): one traced submission on its way from `vkQueueSubmit*` to the
//! traceq thread.

use std::sync::Arc;

use super::recorded_trace::RecordedTrace;
use crate::gpu::completion::Completion;
use crate::gpu::queue_context::{BatchResources, QueueContext};

pub struct Batch {
    pub queue: Arc<QueueContext>,
    /// The submitted command buffers' traces, in submission order.
    pub traces: Vec<Arc<RecordedTrace>>,
    /// Every command buffer the call submitted (instrumented or not), in order.
    pub command_buffers: Vec<u64>,
    /// Taken by the traceq thread once the batch completed; a batch dropped before that
    /// (device lost, given up at exit) leaves its resources to be destroyed with the device.
    pub resources: Option<BatchResources>,
    pub completion: Completion,
    /// The frame current when it was submitted (frames end at `vkQueuePresentKHR`).
    pub frame: u32,
    /// The device's submission counter value of this `vkQueueSubmit*` call.
    pub submission: u64,
    /// Submitted while a capture was active: written. Otherwise the batch only re-arms
    /// and completes (instrumented command buffers submitted outside a capture).
    pub captured: bool,
    /// The submit call on the CPU (Perfetto's `vk_queue_submit`).
    pub submit: SubmitTiming,
}

/// When and where a `vkQueueSubmit*` call ran on the CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubmitTiming {
    /// `CLOCK_BOOTTIME` nanoseconds at the call's start (Perfetto's default trace clock).
    pub start_ns: u64,
    pub duration_ns: u64,
    pub tid: u32,
}

impl Batch {
    /// Events this batch carries (for the dropped-events count).
    pub fn event_count(&self) -> u64 {
        self.traces.iter().map(|t| t.event_count()).sum()
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        if let Some(res) = self.resources.take() {
            self.queue.abandon(res);
        }
    }
}
