//! One entry of a queue's submission order (see `submit_order`): a command buffer, its
//! trace, and the entry of the command buffer submitted after it last time. Generic over
//! the trace so that the trace, which notes its entry, and the order, which holds traces,
//! do not import each other.

use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// No entry.
pub const NONE: usize = usize::MAX;

/// Two to a line.
#[repr(align(32))]
pub struct OrderEntry<T> {
    /// The command buffer (0: none).
    pub key: AtomicU64,
    pub trace: AtomicPtr<T>,
    pub next: AtomicUsize,
}

impl<T> Default for OrderEntry<T> {
    fn default() -> Self {
        OrderEntry {
            key: AtomicU64::new(0),
            trace: AtomicPtr::new(std::ptr::null_mut()),
            next: AtomicUsize::new(NONE),
        }
    }
}

impl<T> OrderEntry<T> {
    /// Clears the entry if it still names `cb` (another command buffer may have taken it
    /// since).
    pub fn forget(&self, cb: u64) {
        let _ = self
            .key
            .compare_exchange(cb, 0, Ordering::Relaxed, Ordering::Relaxed);
    }
}
