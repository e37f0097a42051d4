//! `vkEndCommandBuffer`: a recording frozen into the [`RecordedTrace`] every batch that
//! submits the command buffer shares, reusing the last recording's trace when nothing else
//! holds it.

use std::sync::Arc;

use ash::vk;

use super::CommandTrace;
use crate::trace::record::chunk::ChunkPool;
use crate::trace::record::recorded_trace::{RecordedTrace, TraceParts};

impl<const MAX_WORDS: usize> CommandTrace<MAX_WORDS> {
    /// Freezes the recording at `vkEndCommandBuffer` (`end_event`: the command buffer's
    /// end event, where it was recorded). Returns whether an instrumented recording was in
    /// progress.
    #[must_use]
    pub fn finish(
        &mut self,
        cmd: vk::CommandBuffer,
        pool: &Arc<ChunkPool>,
        end_event: Option<u32>,
    ) -> bool {
        let was_recording = std::mem::take(&mut self.recording);
        self.fast_left = 0;
        if !self.is_instrumented() {
            // Left out of the output (a chunk could not be had): a query still active ends
            // all the same; its pool goes back when the command buffer is reset.
            self.end_hardware((pool, cmd), None);
            return was_recording;
        }
        let (chunks, copies, slots) = self.queries.finish(pool);
        // A trackable primary copies its own queries at its end: each run then leaves its
        // values in memory (see `gpu::run_slots`). The copy goes in before the application's
        // `vkEndCommandBuffer`, after the last timestamp.
        let trackable = self.level == vk::CommandBufferLevel::PRIMARY
            && slots > 0
            && RecordedTrace::trackable(
                pool,
                self.one_time,
                self.simultaneous,
                !self.children.is_empty(),
                slots,
            );
        let run_slot = trackable
            .then(|| pool.self_copy(cmd, self.family, &copies))
            .flatten();
        // Before the events are taken: the command buffer's range ends at the last one.
        // Untracked: every run goes wrapped, the layer's copy reads its statistics.
        let tracked = RecordedTrace::trackable(
            pool,
            self.one_time,
            self.simultaneous,
            !self.children.is_empty(),
            slots,
        );
        let statistics =
            self.freeze_statistics((pool, cmd), (run_slot, tracked), (slots, end_event));
        // The last command the layer records: a query spanning the command buffer ends.
        let hardware = self.freeze_hardware((pool, cmd), end_event);
        let parts = TraceParts {
            cmd,
            chunks,
            copies,
            events: std::mem::take(&mut self.events),
            args: std::mem::take(&mut self.args),
            strings: std::mem::take(&mut self.strings),
            children: std::mem::take(&mut self.children),
            slots,
            complete: self.complete,
            one_time: self.one_time,
            simultaneous: self.simultaneous,
            run_slot,
            statistics,
            hardware,
        };
        // The last recording's trace, if nothing else holds it, takes this one.
        let trace = match self.spare.take() {
            Some(mut trace) => match Arc::get_mut(&mut trace) {
                Some(t) => {
                    t.refill(parts);
                    trace
                }
                None => Arc::new(RecordedTrace::new(parts, Arc::clone(pool))),
            },
            None => Arc::new(RecordedTrace::new(parts, Arc::clone(pool))),
        };
        // `reset` let the last recording go at the begin; one still here leaves its
        // submission order as it would there.
        if let Some(old) = self.recorded.replace(trace) {
            old.forget_order();
        }
        was_recording
    }

    /// The frozen trace to hand to a batch at submit time.
    pub fn recorded(&self) -> Option<&Arc<RecordedTrace>> {
        self.recorded.as_ref()
    }
}
