//! Flush at submit (u_trace_flush): the traces of the submitted command buffers become a
//! batch, wrapped by the layer's re-arm and copy command buffers.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ash::vk;
use ash::vk::Handle;

use super::batch::Batch;
use super::recorded_trace::RecordedTrace;
use super::DeviceTracer;
use crate::gpu::completion::Completion;
use crate::gpu::queue_context::{BatchResources, CopyRange, QueryRange, QueueContext};
use crate::gpu::submit::Wrapping;
use crate::traceq::Message;

/// A batch whose layer command buffers are recorded, waiting for the submit call's result.
pub struct Prepared {
    queue: Arc<QueueContext>,
    traces: Vec<Arc<RecordedTrace>>,
    resources: BatchResources,
    completion: Completion,
    frame: u32,
}

impl Prepared {
    pub fn wrapping(&self) -> Wrapping<'_> {
        Wrapping {
            resources: &self.resources,
            completion: self.completion,
        }
    }
}

impl DeviceTracer {
    /// Collects the traces of `cmdbufs` (in submission order) and records the layer's
    /// command buffers for them. `None`: nothing to trace, submit the application's batches
    /// as they are.
    pub fn prepare(
        &self,
        queue: vk::Queue,
        cmdbufs: impl Iterator<Item = vk::CommandBuffer>,
    ) -> Option<Prepared> {
        let queue_ctx = self.queues.read().get(&queue.as_raw()).cloned()?;
        let mut traces: Vec<Arc<RecordedTrace>> = Vec::new();
        {
            let map = self.cmdbufs.read();
            for cb in cmdbufs {
                let Some(entry) = map.get(&cb.as_raw()) else {
                    continue;
                };
                let Some(recorded) = entry.lock().recorded().cloned() else {
                    continue;
                };
                // A command buffer executed twice in one call writes its queries twice with
                // no reset in between: only its first execution can be timed.
                if traces.iter().any(|t| Arc::ptr_eq(t, &recorded)) {
                    log::debug!(
                        "command buffer {cb:?} submitted twice in one call; timing the first"
                    );
                    continue;
                }
                traces.push(recorded);
            }
        }
        if traces.is_empty() {
            return None;
        }
        // Every query the batch writes (re-armed) and reads (copied, at its slot in the
        // batch's readback: each trace's region follows the previous ones, depth first).
        let mut resets: Vec<QueryRange> = Vec::new();
        let mut copies: Vec<CopyRange> = Vec::new();
        let mut total = 0u32;
        for trace in &traces {
            trace.visit(&mut |t| {
                resets.extend_from_slice(&t.chunks);
                copies.extend(t.copies.iter().map(|c| CopyRange {
                    slot: c.slot + total,
                    ..*c
                }));
                total += t.slots;
            });
        }
        match queue_ctx.prepare(
            &self.dispatch,
            self.set_loader_data,
            &self.caps.memory,
            &resets,
            &copies,
            total,
        ) {
            Ok((resources, completion)) => Some(Prepared {
                queue: queue_ctx,
                traces,
                resources,
                completion,
                frame: self.frame.load(Ordering::Relaxed),
            }),
            Err(e) => {
                self.fault("recording the layer's command buffers", e);
                None
            }
        }
    }

    /// After the submit call: a submitted batch goes to the traceq thread; a failed one gives
    /// its resources back (nothing of it was queued).
    pub fn commit(&self, prepared: Prepared, result: vk::Result, submission: u64) {
        let Prepared {
            queue,
            traces,
            resources,
            completion,
            frame,
        } = prepared;
        if result != vk::Result::SUCCESS {
            queue.recycle(&self.dispatch, resources);
            if result == vk::Result::ERROR_DEVICE_LOST {
                self.fault("vkQueueSubmit", result);
            }
            return;
        }
        self.consumer.send(Message::Batch(Batch {
            queue,
            traces,
            resources: Some(resources),
            completion,
            frame,
            submission,
        }));
    }
}
