//! The application's queues a device's tracer knows, and the layer's resources for each
//! ([`QueueContext`]), made at a queue's first traced submission.

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;
use ash::vk::Handle;
use parking_lot::Mutex;

use crate::gpu::interface::QueueContext;
use crate::trace::handle_index::HandleIndex;

#[derive(Default)]
pub struct Queues {
    /// The application's queues (family, index), whose resources are made at their first
    /// traced submission.
    known: Mutex<HashMap<u64, (u32, u32)>>,
    contexts: Mutex<HashMap<u64, Arc<QueueContext>>>,
    /// Each context of `contexts`, by handle, for the submissions (no lock, no hashing).
    index: HandleIndex<QueueContext>,
}

impl Queues {
    /// A queue the application got; whether it is new.
    pub fn register(&self, queue: vk::Queue, family: u32, index: u32) -> bool {
        self.known
            .lock()
            .insert(queue.as_raw(), (family, index))
            .is_none()
    }

    /// The context of `queue` if it has one: the pointer of an `Arc` that this holds until
    /// [`Self::destroy`], at the device's teardown.
    #[inline]
    pub fn indexed(&self, queue: vk::Queue) -> Option<*const QueueContext> {
        self.index.get(queue.as_raw())
    }

    /// The context of `queue`, made by `make` (from the queue's family and index) at its
    /// first traced submission; `None` for a queue the application never got.
    pub fn context(
        &self,
        queue: vk::Queue,
        make: impl FnOnce(u32, u32) -> Result<QueueContext, vk::Result>,
    ) -> Option<Result<Arc<QueueContext>, vk::Result>> {
        if let Some(ctx) = self.indexed(queue) {
            // SAFETY: `ctx` is the pointer of an `Arc` that `contexts` holds until the device's
            // teardown, which no submission can overlap; one more strong count is the clone
            // returned.
            return Some(Ok(unsafe {
                Arc::increment_strong_count(ctx);
                Arc::from_raw(ctx)
            }));
        }
        let (family, index) = *self.known.lock().get(&queue.as_raw())?;
        Some(make(family, index).map(|ctx| {
            let mut contexts = self.contexts.lock();
            let ctx = contexts
                .entry(queue.as_raw())
                .or_insert_with(|| Arc::new(ctx));
            // A queue is submitted to by one thread at a time (Vulkan), so no other
            // submission looks this handle up meanwhile.
            self.index.insert(queue.as_raw(), Arc::as_ptr(ctx));
            Arc::clone(ctx)
        }))
    }

    /// Calls `f` on every context.
    pub fn each(&self, mut f: impl FnMut(&QueueContext)) {
        for ctx in self.contexts.lock().values() {
            f(ctx);
        }
    }

    /// Forgets every context, handing each to `destroy`. Only at the device's teardown.
    pub fn destroy(&self, mut destroy: impl FnMut(&QueueContext)) {
        self.index.clear();
        for queue in self.contexts.lock().drain() {
            destroy(&queue.1);
        }
    }
}
