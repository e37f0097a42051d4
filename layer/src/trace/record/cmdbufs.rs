//! The device's command buffers and their traces, found from a `vkCmd*` call without a lock
//! the recording threads share.
//!
//! Every command buffer allocated from a traced pool has a [`CbCell`], boxed so that its
//! address never changes, owned by a map guarded by a mutex (taken to allocate and free).
//! The hooks find the cell through a [`HandleIndex`] from handle to cell, probed with atomic
//! loads and no lock.
//!
//! The cells are mutated without a lock: Vulkan requires the application to synchronise
//! host access to a command buffer (and to its pool) in every `vkCmd*`,
//! `vkBegin/EndCommandBuffer`, `vkResetCommandBuffer`, pool reset and free, so two calls
//! never work on one cell at once.

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use ash::vk;
use ash::vk::Handle;
use parking_lot::Mutex;

use crate::trace::handle_index::HandleIndex;
use crate::trace::tracepoints::CommandTrace;

/// One command buffer's trace.
pub struct CbCell(UnsafeCell<CommandTrace>);

// SAFETY: the cell is only mutated through `trace_mut`, whose callers hold the application's
// external synchronisation of the command buffer (see the module's documentation); the
// command trace itself is `Send`.
unsafe impl Sync for CbCell {}

impl CbCell {
    /// The trace, for reading or changing it.
    ///
    /// # Safety
    /// The caller is inside an application call that Vulkan requires to be externally
    /// synchronised for this command buffer, and drops the reference before returning.
    #[allow(clippy::mut_from_ref)] // the application's synchronisation is the lock
    #[inline]
    pub unsafe fn trace_mut(&self) -> &mut CommandTrace {
        // SAFETY: forwarded from the caller.
        unsafe { &mut *self.0.get() }
    }
}

impl CbCell {
    /// The trace, for reading only (a submission, or a secondary executed by a primary).
    ///
    /// # Safety
    /// The command buffer is not being recorded, reset or freed during the caller's call:
    /// Vulkan requires a submitted or executed command buffer to be executable, so several
    /// readers may hold this at once but no writer can.
    #[inline]
    pub unsafe fn trace(&self) -> &CommandTrace {
        // SAFETY: forwarded from the caller.
        unsafe { &*self.0.get() }
    }
}

/// Instrumented recordings in progress on every device of the process.
static RECORDINGS_ANYWHERE: AtomicU32 = AtomicU32::new(0);

/// Whether no command buffer of any device is being recorded with tracepoints: then an idle
/// `vkCmd*` hook may go down without finding its device (see `hooks::common_next`).
/// Relaxed, as [`CommandBuffers::any_recording`].
#[inline(always)]
pub fn nothing_recording() -> bool {
    RECORDINGS_ANYWHERE.load(Ordering::Relaxed) == 0
}

#[derive(Default)]
pub struct CommandBuffers {
    cells: Mutex<HashMap<u64, Box<CbCell>>>,
    /// Each cell of `cells`, by handle, for the hooks.
    index: HandleIndex<CbCell>,
    /// Instrumented recordings in progress (begun, not yet ended or reset).
    recordings: AtomicU32,
}

impl CommandBuffers {
    /// Whether any command buffer of the device is being recorded with tracepoints: the one
    /// load an idle `vkCmd*` hook makes.
    ///
    /// Relaxed: the begin that counted a recording happened before any command recorded
    /// into it (the application synchronises the command buffer between threads).
    #[inline]
    pub fn any_recording(&self) -> bool {
        self.recordings.load(Ordering::Relaxed) != 0
    }

    pub fn recording_started(&self) {
        self.recordings.fetch_add(1, Ordering::Relaxed);
        RECORDINGS_ANYWHERE.fetch_add(1, Ordering::Relaxed);
    }

    pub fn recording_ended(&self) {
        self.recordings.fetch_sub(1, Ordering::Relaxed);
        RECORDINGS_ANYWHERE.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn insert(&self, cb: vk::CommandBuffer, trace: CommandTrace) {
        let cell = Box::new(CbCell(UnsafeCell::new(trace)));
        let mut cells = self.cells.lock();
        self.index.insert(cb.as_raw(), &*cell);
        // A handle the driver handed out again replaces the freed one's cell (the index
        // already points at the new one).
        cells.insert(cb.as_raw(), cell);
    }

    /// Removes a command buffer (freed, or its pool destroyed) and returns its trace.
    pub fn remove(&self, cb: u64) -> Option<CommandTrace> {
        let mut cells = self.cells.lock();
        // Out of the index before the cell goes.
        self.index.remove(cb);
        cells.remove(&cb).map(|c| c.0.into_inner())
    }

    /// Removes every command buffer; the device is going.
    pub fn clear(&self) {
        let mut cells = self.cells.lock();
        self.index.clear();
        cells.clear();
    }

    /// The cell of `cb`, if the layer traces it.
    ///
    /// # Safety
    /// `cb` is a command buffer the application passes in the current call, so it stays
    /// allocated until the call returns; the result is not kept past the call.
    #[inline]
    pub unsafe fn get(&self, cb: vk::CommandBuffer) -> Option<&CbCell> {
        let cell = self.index.get(cb.as_raw())?;
        // SAFETY: the cell stays allocated while `cb` is (see the contract): it leaves the
        // index before it is dropped, at the free the application orders after this call.
        unsafe { cell.as_ref() }
    }

    /// Runs `f` on every cell of `cbs` the layer has.
    ///
    /// # Safety
    /// The application synchronises host access to every command buffer of `cbs` (a pool
    /// reset, for example).
    pub unsafe fn for_each(
        &self,
        cbs: impl IntoIterator<Item = u64>,
        mut f: impl FnMut(&mut CommandTrace),
    ) {
        let cells = self.cells.lock();
        for cb in cbs {
            if let Some(cell) = cells.get(&cb) {
                // SAFETY: forwarded from the caller.
                f(unsafe { cell.trace_mut() });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(family: u32) -> CommandTrace {
        CommandTrace::new(
            vk::CommandPool::null(),
            family,
            vk::CommandBufferLevel::PRIMARY,
        )
    }

    fn family_of(cbs: &CommandBuffers, cb: vk::CommandBuffer) -> Option<u32> {
        // SAFETY: the test is the only user of these command buffers.
        unsafe { cbs.get(cb).map(|c| c.trace_mut().family) }
    }

    #[test]
    fn a_handle_reused_after_a_free_finds_its_new_trace() {
        let cbs = CommandBuffers::default();
        let cb = vk::CommandBuffer::from_raw(0x1000);
        cbs.insert(cb, trace(1));
        assert_eq!(family_of(&cbs, cb), Some(1));
        assert_eq!(family_of(&cbs, cb), Some(1));
        assert!(cbs.remove(cb.as_raw()).is_some());
        assert_eq!(family_of(&cbs, cb), None, "a freed command buffer is gone");
        // The driver hands out the same handle for a new command buffer.
        cbs.insert(cb, trace(2));
        assert_eq!(family_of(&cbs, cb), Some(2), "not the freed trace");
    }

    #[test]
    fn many_command_buffers_are_each_found() {
        let cbs = CommandBuffers::default();
        let handles: Vec<_> = (1..=300u64)
            .map(|i| vk::CommandBuffer::from_raw(i * 0x100))
            .collect();
        for (i, &cb) in handles.iter().enumerate() {
            cbs.insert(cb, trace(i as u32));
        }
        for _ in 0..3 {
            for (i, &cb) in handles.iter().enumerate() {
                assert_eq!(family_of(&cbs, cb), Some(i as u32));
            }
        }
    }

    #[test]
    fn recordings_in_progress_are_counted() {
        let cbs = CommandBuffers::default();
        assert!(!cbs.any_recording());
        cbs.recording_started();
        cbs.recording_started();
        cbs.recording_ended();
        assert!(cbs.any_recording());
        cbs.recording_ended();
        assert!(!cbs.any_recording());
    }
}
