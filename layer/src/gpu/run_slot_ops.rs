//! The backend's side of run slots (see `run_slots`): taking and giving back a slot,
//! reading it, and recording a tracked command buffer's copy of its own queries into it.

use ash::vk;

use super::backend::Backend;
use super::layer_commands;
use super::run_slots::RunSlot;
use super::segments::CopyRange;

/// A device's run slots, as the recording side and traceq use them.
impl Backend {
    /// Whether command buffers of `family` may copy query results (graphics or compute:
    /// `vkCmdCopyQueryPoolResults` is not allowed on a transfer-only queue).
    pub fn family_copies_queries(&self, family: u32) -> bool {
        self.caps().families.get(family as usize).is_some_and(|f| {
            f.flags
                .intersects(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)
        })
    }

    /// A run slot, or `None` when memory is short.
    pub fn acquire_run_slot(&self) -> Option<RunSlot> {
        self.run_slots.acquire(self.dispatch(), &self.caps().memory)
    }

    pub fn release_run_slot(&self, slot: RunSlot) {
        self.run_slots.release(slot);
    }

    /// The first `out.len()` values of `slot`, written by completed work.
    pub fn read_run_slot(&self, slot: RunSlot, out: &mut [u64]) {
        self.run_slots.read(self.dispatch(), slot, out);
    }

    /// Records the copy of `copies` into `slot` at the end of the application's `cb`.
    ///
    /// # Safety
    /// `cb` is recording, primary, outside any render pass, of a family that copies query
    /// results ([`Self::family_copies_queries`]), and `copies` are its own queries.
    pub unsafe fn record_self_copy(
        &self,
        cb: vk::CommandBuffer,
        copies: &[CopyRange],
        slot: RunSlot,
    ) {
        layer_commands::copy_to_host(self.dispatch(), cb, copies, slot.buffer, slot.offset);
    }

    /// Frees every run slot. Only when the device is idle.
    pub fn destroy_run_slots(&self) {
        self.run_slots.destroy_all(self.dispatch());
    }
}
