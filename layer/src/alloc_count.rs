//! Debug builds only: the layer's allocations counted per thread, for the test that proves
//! the recording and submission paths allocate nothing in the steady state
//! (`tests/src/patterns/allocations.rs`), and the bytes a thread holds at most, for the
//! unit tests that bound traceq's memory; and the batches the traceq threads have finished
//! with, so that the allocation test knows when a round's resources are back. A release
//! build has no such allocator and no such symbols.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

thread_local! {
    // Const-initialised and without a destructor: usable from inside the allocator, on
    // any thread, at any point of its life.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    // Bytes allocated less bytes freed on this thread (negative when it frees what another
    // thread allocated), and the most it reached since `reset_peak`.
    static HELD: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

struct Counting;

fn count() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

fn hold(bytes: i64) {
    let _ = HELD.try_with(|held| {
        held.set(held.get() + bytes);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(held.get())));
    });
}

/// Starts measuring the calling thread's peak from what it holds now, which it returns.
#[cfg(test)]
pub fn reset_peak() -> i64 {
    let held = HELD.try_with(Cell::get).unwrap_or(0);
    let _ = PEAK.try_with(|peak| peak.set(held));
    held
}

/// The most bytes the calling thread held since [`reset_peak`].
#[cfg(test)]
pub fn peak() -> i64 {
    PEAK.try_with(Cell::get).unwrap_or(0)
}

// SAFETY: every call is passed to the system allocator unchanged; counting touches only a
// thread-local integer.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        hold(layout.size() as i64);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        hold(layout.size() as i64);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        hold(new_size as i64 - layout.size() as i64);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        hold(-(layout.size() as i64));
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Allocations (and reallocations) the layer made on the calling thread so far.
#[no_mangle]
pub extern "C" fn utrace_debug_allocations_on_this_thread() -> u64 {
    ALLOCATIONS.try_with(Cell::get).unwrap_or(0)
}

/// Batches the traceq threads have finished with: written (or given up) and dropped, their
/// lists, queries and command buffers given back to the pools the recording and
/// submitting threads take from.
static BATCHES_RELEASED: AtomicU64 = AtomicU64::new(0);

/// A traceq thread has dropped a batch.
pub fn batch_released() {
    BATCHES_RELEASED.fetch_add(1, Ordering::Release);
}

/// [`BATCHES_RELEASED`], for the allocation test: it waits for its round's batches to be
/// released before the next round, rather than guessing how long that takes.
#[no_mangle]
pub extern "C" fn utrace_debug_batches_released() -> u64 {
    BATCHES_RELEASED.load(Ordering::Acquire)
}
