//! The application's queues a device's tracer knows, and the layer's resources for each
//! ([`QueueContext`]), made at a queue's first traced submission, with the order of its
//! submissions ([`SubmitOrder`]), made when the application gets the queue.

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;
use ash::vk::Handle;
use parking_lot::Mutex;

use crate::gpu::interface::QueueContext;
use crate::trace::handle_index::HandleIndex;
use crate::trace::record::submit_order::SubmitOrder;

/// A queue the application got.
struct KnownQueue {
    family: u32,
    index: u32,
    /// Boxed: traces point into it. Kept until the tracer goes, after every command
    /// buffer's cell (the tracer's `cmdbufs` come before its `queues`), so that no trace a
    /// cell lets go can point into a freed order.
    order: Box<SubmitOrder>,
}

#[derive(Default)]
pub struct Queues {
    /// The application's queues, whose resources are made at their first traced
    /// submission.
    known: Mutex<HashMap<u64, KnownQueue>>,
    /// Each known queue's order, by handle, for the submissions.
    orders: HandleIndex<SubmitOrder>,
    contexts: Mutex<HashMap<u64, Arc<QueueContext>>>,
    /// Each context of `contexts`, by handle, for the submissions (no lock, no hashing).
    index: HandleIndex<QueueContext>,
}

impl Queues {
    /// A queue the application got; whether it is new.
    pub fn register(&self, queue: vk::Queue, family: u32, index: u32) -> bool {
        let mut known = self.known.lock();
        if known.contains_key(&queue.as_raw()) {
            return false;
        }
        let order = Box::<SubmitOrder>::default();
        self.orders.insert(queue.as_raw(), &*order);
        known.insert(
            queue.as_raw(),
            KnownQueue {
                family,
                index,
                order,
            },
        );
        true
    }

    /// The order of `queue`'s submissions, if the application got the queue.
    #[inline]
    pub fn order(&self, queue: vk::Queue) -> Option<&SubmitOrder> {
        let order = self.orders.get(queue.as_raw())?;
        // SAFETY: boxed in `known`, which keeps it until the tracer goes.
        Some(unsafe { &*order })
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
        let (family, index) = self
            .known
            .lock()
            .get(&queue.as_raw())
            .map(|q| (q.family, q.index))?;
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
        for (&queue, known) in self.known.lock().iter() {
            let (found, looked_up) = known.order.counts();
            log::debug!(
                "queue {:?}: {found} traced command buffers found in the order of the queue's submissions, {looked_up} looked up",
                vk::Queue::from_raw(queue)
            );
        }
        self.index.clear();
        for queue in self.contexts.lock().drain() {
            destroy(&queue.1);
        }
    }
}
