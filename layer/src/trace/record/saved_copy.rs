//! A reusable run saved by the GPU (see `reruns`): the layer's resources whose readback a
//! submission's copy wrote it into, until traceq has read it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ash::vk;

use super::reruns::SavedRun;
use crate::gpu::interface::{Backend, BatchResources, Completion, QueueContext, WaitOutcome};

/// How long traceq waits for a save to complete (the submission that carries it, which
/// may hold long work of the application's) before it counts the run lost.
const SAVE_WAIT: Duration = Duration::from_secs(10);

/// One wait on the GPU inside [`SAVE_WAIT`].
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// A run copied into the readback of the layer's resources (recorded for the trace alone,
/// their copy resetting the queries) by a submission that completes at `completion`.
pub struct SavedCopy {
    backend: Backend,
    queue: Arc<QueueContext>,
    /// Until given back (or abandoned).
    resources: Option<BatchResources>,
    /// Once the submission was made.
    completion: Option<Completion>,
    /// The traceq thread is stopping (the device or the process is going).
    stopping: Option<Arc<AtomicBool>>,
}

impl SavedCopy {
    pub fn new(
        backend: Backend,
        queue: Arc<QueueContext>,
        resources: BatchResources,
        stopping: Option<Arc<AtomicBool>>,
    ) -> Self {
        SavedCopy {
            backend,
            queue,
            resources: Some(resources),
            completion: None,
            stopping,
        }
    }

    /// Waits for the save's submission, in slices; once traceq is stopping, only looks.
    /// `vkDestroyDevice` requires the device's work done, so a save is complete by then
    /// unless the GPU is not finishing (or the process exits with work in flight): a save
    /// waited for past that, one per batch, would keep traceq past the time teardown
    /// gives it, and it would call into a device being destroyed.
    fn wait(&self) -> Result<(), vk::Result> {
        let completion = self.completion.ok_or(vk::Result::ERROR_UNKNOWN)?;
        let started = Instant::now();
        loop {
            let stopping = self
                .stopping
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed));
            let slice = if stopping { 0 } else { WAIT_SLICE.as_nanos() };
            match self.backend.wait(&completion, slice as u64) {
                WaitOutcome::Done => return Ok(()),
                WaitOutcome::Failed(e) => return Err(e),
                WaitOutcome::TimedOut if stopping || started.elapsed() >= SAVE_WAIT => {
                    return Err(vk::Result::TIMEOUT)
                }
                WaitOutcome::TimedOut => {}
            }
        }
    }
}

impl SavedRun for SavedCopy {
    type Completion = Completion;

    fn made(&mut self, completion: Completion) {
        self.completion = Some(completion);
    }

    fn unused(mut self) {
        // Never submitted: nothing on the GPU uses them.
        if let Some(resources) = self.resources.take() {
            self.backend.recycle(&self.queue, resources);
        }
    }

    fn finish(mut self, out: Option<&mut [u64]>) -> Result<(), vk::Result> {
        // Not completed: the resources stay with `Drop` (abandoned).
        self.wait()?;
        let Some(resources) = self.resources.take() else {
            return Err(vk::Result::ERROR_UNKNOWN);
        };
        let read = match (out, &resources.readback) {
            (None, _) => Ok(()),
            (Some(out), Some(readback)) => {
                let values = self.backend.read_copied(readback, out.len() as u32);
                let n = out.len().min(values.len());
                out[..n].copy_from_slice(&values[..n]);
                Ok(())
            }
            // Recorded without a readback (none could be had): the queries were reset,
            // nothing was copied.
            (Some(_), None) => Err(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY),
        };
        self.backend.recycle(&self.queue, resources);
        read
    }
}

impl Drop for SavedCopy {
    fn drop(&mut self) {
        // Never finished (dropped for room, or its wait failed): the copy may be pending.
        if let Some(resources) = self.resources.take() {
            self.queue.abandon(resources);
        }
    }
}
