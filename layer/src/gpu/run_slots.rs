//! Readback slots of tracked command buffers: each trackable recording copies its own
//! queries into a slot of its own at its end (`vkCmdCopyQueryPoolResults` recorded at
//! `vkEndCommandBuffer`), so that each of its runs leaves its values in memory as well as
//! in the queries. traceq, and a resubmission that finds the last run unread, read the
//! slot: memory, where Lavapipe's query reads wait for the device and cost 40 ns a query.
//! Slots are taken at the end of a recording and given back with it, never per tracepoint.

use ash::vk;
use parking_lot::Mutex;

use super::readback::Readback;
use crate::loader::dispatch::DeviceDispatch;

/// Values a slot holds: as many queries as a tracked trace may write.
pub const SLOT_VALUES: u32 = 256;
/// Slots in one block (one buffer and its memory): 128 KiB.
const SLOTS_PER_BLOCK: u32 = 64;

/// A slot: its buffer and where in it the slot begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunSlot {
    pub buffer: vk::Buffer,
    /// Bytes from the buffer's start.
    pub offset: u64,
    block: u32,
    index: u32,
}

#[derive(Default)]
pub struct RunSlots {
    slab: Mutex<Slab>,
}

#[derive(Default)]
struct Slab {
    blocks: Vec<Readback>,
    free: Vec<RunSlot>,
}

impl RunSlots {
    /// A free slot, a new block made when there is none; `None` when memory is short.
    pub fn acquire(
        &self,
        d: &DeviceDispatch,
        memory: &vk::PhysicalDeviceMemoryProperties,
    ) -> Option<RunSlot> {
        let mut slab = self.slab.lock();
        if let Some(slot) = slab.free.pop() {
            return Some(slot);
        }
        let block = Readback::create(d, memory, SLOTS_PER_BLOCK * SLOT_VALUES).ok()?;
        let number = slab.blocks.len() as u32;
        let buffer = block.buffer;
        slab.blocks.push(block);
        slab.free
            .extend((1..SLOTS_PER_BLOCK).rev().map(|index| RunSlot {
                buffer,
                offset: u64::from(index * SLOT_VALUES) * 8,
                block: number,
                index,
            }));
        Some(RunSlot {
            buffer,
            offset: 0,
            block: number,
            index: 0,
        })
    }

    pub fn release(&self, slot: RunSlot) {
        self.slab.lock().free.push(slot);
    }

    /// The slot's first `out.len()` values, written by completed work.
    pub fn read(&self, d: &DeviceDispatch, slot: RunSlot, out: &mut [u64]) {
        let slab = self.slab.lock();
        let first = slot.index * SLOT_VALUES;
        let count = (out.len() as u32).min(SLOT_VALUES);
        let values = slab.blocks[slot.block as usize].read_at(d, first, count);
        out[..values.len()].copy_from_slice(values);
    }

    /// Frees every block. Only when the device is idle.
    pub fn destroy_all(&self, d: &DeviceDispatch) {
        let mut slab = self.slab.lock();
        slab.free.clear();
        for block in slab.blocks.drain(..) {
            block.destroy(d);
        }
    }
}
