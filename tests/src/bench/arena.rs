//! The command pool of the share row (the layer's own share of a traced draw): its host
//! memory comes from an arena that every recording fills again from its start.
//!
//! Lavapipe allocates every recorded command. From the process's heap, the speed of those
//! allocations depends on where the side's commands happen to lie: the hand-timed draw
//! without the layer took 72.5 ns in some processes and 75.7 ns in others, the mode set by
//! incidental heap layout (the trace file's name, the output format, the heap tunables),
//! while the traced draw stayed at 85-87 ns; the share swung between 10 and 13 ns with
//! nothing of the layer changed. From an arena, each side's commands lie at the same offsets
//! in every round and every process, so B - A is the layer's own work.

use std::alloc::{alloc, dealloc, Layout};
use std::cell::Cell;
use std::ffi::c_void;

use ash::vk;

use super::side::Side;
use crate::vk::{check, Result};

/// Room for one recording of the row: 10,000 draws, three commands each, with headers.
const ARENA_BYTES: usize = 16 << 20;
/// A block's header (where it came from, its layout) sits in the 16 bytes before it; blocks
/// are aligned as malloc's are.
const HEADER: usize = 16;

/// The arena and whether it serves allocations yet (the pool and its command buffer come
/// from the heap: they outlive the rounds).
pub struct Arena {
    base: *mut u8,
    used: Cell<usize>,
    /// Blocks of the arena not yet freed.
    live: Cell<usize>,
    active: Cell<bool>,
}

/// A block's header: its size, and for a block from the heap the alignment it was
/// allocated with (the allocation starts that many bytes before the block); 0 for a block
/// of the arena.
#[repr(C)]
struct Header {
    size: usize,
    heap_align: usize,
}

impl Arena {
    fn new() -> Box<Arena> {
        let layout = Layout::from_size_align(ARENA_BYTES, 4096).expect("a valid layout");
        // SAFETY: a non-zero size.
        let base = unsafe { alloc(layout) };
        assert!(!base.is_null(), "the arena's {ARENA_BYTES} bytes");
        // Faulted in now, not in the first rounds.
        // SAFETY: the whole allocation is writable.
        unsafe { std::ptr::write_bytes(base, 0, ARENA_BYTES) };
        Box::new(Arena {
            base,
            used: Cell::new(0),
            live: Cell::new(0),
            active: Cell::new(false),
        })
    }

    /// The next recording fills the arena from its start: the last one's commands were
    /// freed when its command buffer was begun again. Were a block still live, the arena
    /// would go on after it instead (and the figures would show it).
    pub fn restart(&self) {
        self.active.set(true);
        if self.live.get() == 0 {
            self.used.set(0);
        }
    }

    fn allocate(&self, size: usize, align: usize) -> *mut u8 {
        let align = align.max(HEADER);
        let size = size.max(1);
        if self.active.get() {
            let start = (self.used.get() + HEADER).next_multiple_of(align);
            if start + size <= ARENA_BYTES {
                self.used.set(start + size);
                self.live.set(self.live.get() + 1);
                // SAFETY: inside the arena's allocation.
                let p = unsafe { self.base.add(start) };
                // SAFETY: the header's bytes lie inside the arena, before the block.
                unsafe { write_header(p, size, 0) };
                return p;
            }
        }
        let Ok(layout) = Layout::from_size_align(size + align, align) else {
            return std::ptr::null_mut();
        };
        // SAFETY: a non-zero size.
        let raw = unsafe { alloc(layout) };
        if raw.is_null() {
            return raw;
        }
        // SAFETY: `align` >= HEADER bytes lie before the returned block, inside `raw`.
        let p = unsafe { raw.add(align) };
        // SAFETY: as above.
        unsafe { write_header(p, size, align) };
        p
    }

    /// The header `allocate` wrote before `p`.
    ///
    /// # Safety
    /// `p` came from `allocate` and was not freed.
    unsafe fn header(p: *mut u8) -> Header {
        // SAFETY: the caller's promise.
        unsafe { p.cast::<Header>().sub(1).read() }
    }

    fn free(&self, p: *mut u8) {
        if p.is_null() {
            return;
        }
        // SAFETY: Vulkan frees only what the callbacks allocated, once.
        let Header { size, heap_align } = unsafe { Arena::header(p) };
        if heap_align == 0 {
            self.live.set(self.live.get() - 1);
            return;
        }
        let layout = Layout::from_size_align(size + heap_align, heap_align).expect("its layout");
        // SAFETY: allocated with this layout, `heap_align` bytes before the block.
        unsafe { dealloc(p.sub(heap_align), layout) };
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(ARENA_BYTES, 4096).expect("a valid layout");
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.base, layout) };
    }
}

/// # Safety
/// The `size_of::<Header>()` bytes before `p` are writable.
unsafe fn write_header(p: *mut u8, size: usize, heap_align: usize) {
    // SAFETY: the caller's promise.
    unsafe { p.cast::<Header>().sub(1).write(Header { size, heap_align }) };
}

unsafe extern "system" fn allocation(
    user: *mut c_void,
    size: usize,
    align: usize,
    _scope: vk::SystemAllocationScope,
) -> *mut c_void {
    // SAFETY: `user` is the pool's `Arena`, alive until the pool is destroyed.
    let arena = unsafe { &*user.cast::<Arena>() };
    arena.allocate(size, align).cast()
}

unsafe extern "system" fn reallocation(
    user: *mut c_void,
    original: *mut c_void,
    size: usize,
    align: usize,
    scope: vk::SystemAllocationScope,
) -> *mut c_void {
    // SAFETY: as in `allocation`.
    let fresh = unsafe { allocation(user, size, align, scope) };
    if !fresh.is_null() && !original.is_null() {
        // SAFETY: `original` is a live block of these callbacks.
        let old = unsafe { Arena::header(original.cast()) }.size;
        // SAFETY: both blocks hold at least the bytes copied and do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(original.cast::<u8>(), fresh.cast(), old.min(size))
        };
        // SAFETY: as in `allocation`.
        unsafe { &*user.cast::<Arena>() }.free(original.cast());
    }
    fresh
}

unsafe extern "system" fn free(user: *mut c_void, memory: *mut c_void) {
    // SAFETY: as in `allocation`.
    unsafe { &*user.cast::<Arena>() }.free(memory.cast());
}

/// The row's command pool and command buffer on one side, with the arena behind them.
pub struct ArenaPool {
    pub arena: Box<Arena>,
    pub pool: vk::CommandPool,
    pub cb: vk::CommandBuffer,
}

impl ArenaPool {
    pub fn new(s: &Side) -> Result<ArenaPool> {
        let arena = Arena::new();
        let callbacks = callbacks(&arena);
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(s.dev.family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: valid create info; the arena outlives the pool (see `destroy`).
        let pool = check(
            unsafe { s.dev.device.create_command_pool(&info, Some(&callbacks)) },
            "vkCreateCommandPool",
        )?;
        let allocate = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: valid allocate info.
        let cb = check(
            unsafe { s.dev.device.allocate_command_buffers(&allocate) },
            "vkAllocateCommandBuffers",
        )?[0];
        Ok(ArenaPool { arena, pool, cb })
    }

    pub fn destroy(self, s: &Side) {
        let callbacks = callbacks(&self.arena);
        // SAFETY: the pool is idle (its command buffer was never submitted).
        unsafe {
            s.dev
                .device
                .destroy_command_pool(self.pool, Some(&callbacks))
        };
    }
}

fn callbacks(arena: &Arena) -> vk::AllocationCallbacks<'static> {
    vk::AllocationCallbacks::default()
        .user_data((arena as *const Arena).cast_mut().cast())
        .pfn_allocation(Some(allocation))
        .pfn_reallocation(Some(reallocation))
        .pfn_free(Some(free))
}
