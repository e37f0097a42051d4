//! A recording's hardware counter queries (`GPU_TRACE_COUNTERS=perf:...`, see
//! `record::hardware`): one around the whole command buffer, begun as its first command and
//! ended as its last, or one around each render pass instance, outside it.

use ash::vk;

use super::CommandTrace;
use crate::trace::record::chunk::ChunkPool;
use crate::trace::record::hardware::HwRecording;
use crate::trace::record::recorded_hw::RecordedHw;
use crate::trace::record::recorder::Recorder;

impl<const MAX_WORDS: usize> CommandTrace<MAX_WORDS> {
    /// This recording gets hardware counters (a primary of a family that has them, not for
    /// simultaneous use),
    /// right after `vkBeginCommandBuffer`: a query spanning the whole command buffer begins
    /// here, before any other command.
    pub fn count_hardware(&mut self, rec: &Recorder<'_>, whole: bool) {
        let Some(hw) = HwRecording::new(&rec.chunks.hardware, self.family, whole) else {
            return;
        };
        self.hardware = Some(Box::new(hw));
        if whole {
            self.begin_hardware(rec);
        }
    }

    /// Whether render passes get a hardware counter query each.
    fn counts_passes_in_hardware(&self) -> bool {
        self.hardware.as_deref().is_some_and(|h| !h.whole())
    }

    /// Before a render pass instance begins (and before its start tracepoint): its query
    /// begins, where passes are counted.
    pub fn begin_pass_hardware(&mut self, rec: &Recorder<'_>) {
        if self.counts_passes_in_hardware() {
            self.begin_hardware(rec);
        }
    }

    /// After a render pass instance ended and its end tracepoint was recorded (`before`
    /// events before it): its query ends, where passes are counted.
    pub fn end_pass_hardware(&mut self, rec: &Recorder<'_>, before: usize) {
        if self.counts_passes_in_hardware() {
            self.end_hardware((rec.chunks, rec.cmd), Some(before));
        }
    }

    /// Begins a hardware counter query (none is active).
    pub fn begin_hardware(&mut self, rec: &Recorder<'_>) {
        let Some((pool, query)) = self.hardware.as_deref_mut().and_then(HwRecording::begin) else {
            return;
        };
        // SAFETY: the command buffer is recording, of the pool's family, with none of the
        // layer's performance queries active (the application's own are never beside the
        // layer's: it stands aside for an application that enables the extension); the
        // profiling lock is held for the device's life; the query is reset before each run
        // (pools come reset, each query is used once per recording, and a reusable
        // recording's queries are reset on the host between its runs). A
        // whole command buffer's begins right after vkBeginCommandBuffer; a render pass's
        // before the pass begins.
        unsafe { rec.chunks.backend().begin_perf(rec.cmd, pool, query) };
    }

    /// Ends the active hardware counter query, its values going to the range whose end
    /// tracepoint was just recorded (`before` events before it), or nowhere (`None`, or
    /// that tracepoint was not recorded).
    pub fn end_hardware(&mut self, rec: (&ChunkPool, vk::CommandBuffer), before: Option<usize>) {
        let range = before.and_then(|b| self.just_recorded(b));
        let Some(hw) = self.hardware.as_deref_mut() else {
            return;
        };
        let Some((pool, query)) = hw.end() else {
            hw.ended_without(range);
            return;
        };
        // SAFETY: the query is the one active in the command buffer; a whole command
        // buffer's ends as its last command (`freeze_hardware`), a render pass's after the
        // pass ended.
        unsafe { rec.0.backend().end_perf(rec.1, pool, query) };
        hw.ended(range);
    }

    /// At the recording's end, after everything else the layer records in it: the query
    /// spanning the whole command buffer ends, its range the command buffer's (whose end
    /// event is `end_event`, where it was recorded); what the frozen trace keeps.
    pub(super) fn freeze_hardware(
        &mut self,
        rec: (&ChunkPool, vk::CommandBuffer),
        end_event: Option<u32>,
    ) -> Option<RecordedHw> {
        self.end_hardware(rec, end_event.map(|e| e as usize));
        let hw = self.hardware.take()?;
        let set = rec.0.hardware.set()?;
        Some((*hw).freeze(self.family, set, !self.one_time))
    }
}
