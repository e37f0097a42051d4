//! On a device whose query reads wait for all its work (Lavapipe's, see
//! `trace::record::reruns`), traceq holds a reusable run's lock while it reads the run on
//! the host: a resubmission that came then would wait for the read, and so for every piece
//! of the GPU's work in flight. So before such a read traceq lets the run settle.

use std::time::{Duration, Instant};

use crate::gpu::interface::{Completion, QueueContext};
use crate::trace::submit::batch::Batch;

/// How long after a batch completed traceq leaves its reusable runs in the queries for a
/// resubmission to save: about as long as an application takes to submit again after a
/// fence.
const SETTLE: Duration = Duration::from_millis(2);
const SETTLE_POLL: Duration = Duration::from_micros(100);

/// Before the host reads `batch`'s reusable runs left in the queries, where the device's
/// reads wait for all its work (`reads_wait`): for up to [`SETTLE`]
/// after the batch completed, and for as long as the queue's newer work keeps it busy,
/// waits (with `wait`, false when the wait failed) without the runs' locks. A
/// resubmission that comes meanwhile has its last run saved by the GPU; the read made
/// under the lock afterwards finds the device idle, so a resubmission that comes during it
/// waits little. Only work whose signal was submitted is seen: a burst submitted without
/// fences or semaphores, or without instrumented command buffers, can still make the read
/// (and a resubmission that comes during it) wait.
pub fn settle_before_reading(
    reads_wait: bool,
    batch: &Batch,
    mut wait: impl FnMut(&QueueContext, &Completion) -> bool,
) {
    if !reads_wait || !batch.traces.iter().any(|t| t.tracked()) {
        return;
    }
    let completed = Instant::now();
    let mut waited_for = 0;
    loop {
        let left = batch
            .traces
            .iter()
            .any(|t| t.run_in_queries(batch.submission));
        if !left {
            return;
        }
        match batch.queue.latest_signal() {
            // Work submitted since: wait for it (the read would).
            Some(latest @ Completion::Timeline { value, .. }) if value > waited_for => {
                waited_for = value;
                if !wait(&batch.queue, &latest) {
                    return;
                }
            }
            _ if completed.elapsed() >= SETTLE => return,
            _ => std::thread::sleep(SETTLE_POLL),
        }
    }
}
