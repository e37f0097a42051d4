//! The device's command buffers and their traces, found from a `vkCmd*` call without a lock
//! the recording threads share.
//!
//! Every command buffer allocated from a traced pool has a [`CbCell`], boxed so that its
//! address never changes, in a map guarded by a mutex. A recording thread keeps the cells it
//! used last in a small thread-local cache; a hit costs two loads and a compare. The cache
//! is keyed by the handle and by a process-wide generation that every allocation and free
//! advances: a handle the driver reuses for a new command buffer can only reach the hook
//! after its allocation, which the generation saw, so a stale cell is never used.
//!
//! The cells are mutated without a lock: Vulkan requires the application to synchronise
//! host access to a command buffer (and to its pool) in every `vkCmd*`,
//! `vkBegin/EndCommandBuffer`, `vkResetCommandBuffer`, pool reset and free, so two calls
//! never work on one cell at once.

use std::cell::{Cell, UnsafeCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use ash::vk;
use ash::vk::Handle;
use parking_lot::Mutex;

use super::command_trace::CommandTrace;

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

/// Advanced by every allocation and free of a traced command buffer, in any device.
static GENERATION: AtomicU64 = AtomicU64::new(1);

/// A command buffer this thread used recently, and the generation it was looked up in.
#[derive(Clone, Copy)]
struct Recent {
    cb: u64,
    cell: *const CbCell,
    generation: u64,
}

const NONE: Recent = Recent {
    cb: 0,
    cell: std::ptr::null(),
    generation: 0,
};
/// Command buffers a thread records into at once, remembered; more cost a locked look-up.
const RECENT: usize = 4;

thread_local! {
    static RECENTLY_USED: [Cell<Recent>; RECENT] = const { [const { Cell::new(NONE) }; RECENT] };
    static NEXT_VICTIM: Cell<usize> = const { Cell::new(0) };
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
        self.cells
            .lock()
            .insert(cb.as_raw(), Box::new(CbCell(UnsafeCell::new(trace))));
        GENERATION.fetch_add(1, Ordering::Relaxed);
    }

    /// Removes a command buffer (freed, or its pool destroyed) and returns its trace.
    pub fn remove(&self, cb: u64) -> Option<CommandTrace> {
        // Advanced before the cell goes, so no cache entry made earlier matches again.
        GENERATION.fetch_add(1, Ordering::Relaxed);
        self.cells.lock().remove(&cb).map(|c| c.0.into_inner())
    }

    /// Removes every command buffer; the device is going.
    pub fn clear(&self) {
        GENERATION.fetch_add(1, Ordering::Relaxed);
        self.cells.lock().clear();
    }

    /// The cell of `cb`, if the layer traces it.
    ///
    /// # Safety
    /// `cb` is a command buffer the application passes in the current call, so it stays
    /// allocated until the call returns; the result is not kept past the call.
    #[inline]
    pub unsafe fn get(&self, cb: vk::CommandBuffer) -> Option<&CbCell> {
        let key = cb.as_raw();
        // Relaxed: an allocation or free of this very handle happened before the
        // application could pass it here (it synchronises those with its use of the
        // handle), so its advance of the generation is visible.
        let generation = GENERATION.load(Ordering::Relaxed);
        let hit = RECENTLY_USED.with(|recent| {
            recent
                .iter()
                .map(Cell::get)
                .find(|r| r.cb == key && r.generation == generation)
        });
        if let Some(r) = hit {
            // SAFETY: the cell was `key`'s when the generation was `generation`, and no
            // command buffer was allocated or freed since: it is still allocated.
            return unsafe { r.cell.as_ref() };
        }
        let cells = self.cells.lock();
        let cell: *const CbCell = &**cells.get(&key)?;
        // Looked up under the lock, so no free could have come between the generation read
        // above and this look-up without the cache entry being stale at once.
        let slot = NEXT_VICTIM.with(|n| {
            let slot = n.get();
            n.set((slot + 1) % RECENT);
            slot
        });
        RECENTLY_USED.with(|recent| {
            recent[slot].set(Recent {
                cb: key,
                cell,
                generation,
            })
        });
        // SAFETY: the cell stays allocated while `cb` is (see the contract).
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
        // Cached in this thread by the first look-up.
        assert_eq!(family_of(&cbs, cb), Some(1));
        assert_eq!(family_of(&cbs, cb), Some(1));
        assert!(cbs.remove(cb.as_raw()).is_some());
        assert_eq!(family_of(&cbs, cb), None, "a freed command buffer is gone");
        // The driver hands out the same handle for a new command buffer.
        cbs.insert(cb, trace(2));
        assert_eq!(family_of(&cbs, cb), Some(2), "not the cached, freed trace");
    }

    #[test]
    fn more_command_buffers_than_the_cache_holds_are_each_found() {
        let cbs = CommandBuffers::default();
        let handles: Vec<_> = (1..=3 * RECENT as u64)
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
