//! On a device whose query reads wait for all its work (Lavapipe's, see
//! `trace::record::reruns`), traceq holds a reusable run's lock while it reads the run on
//! the host: a resubmission that came then would wait for the read, and so for every piece
//! of the GPU's work in flight. So before such a read traceq lets the run settle.

use std::time::{Duration, Instant};

use crate::gpu::interface::{Completion, QueueContext};
use crate::trace::submit::batch::Batch;

/// How long after a batch completed traceq leaves its reusable runs in the queries before
/// it reads them: long enough for what an application submits as soon as its fence
/// signals (tens of microseconds) to be seen and waited for first, short enough that an
/// application paced at frame rate finds its runs read (a resubmission that finds its last
/// run unread has it saved by the GPU).
const SETTLE: Duration = Duration::from_micros(250);
const SETTLE_POLL: Duration = Duration::from_micros(50);

/// How long traceq waits at most for a submission being made on the queue (its signal
/// handed out, the call not yet returned) to say it was made; one that failed never does.
const BEING_MADE: Duration = Duration::from_millis(5);

/// Before the host reads `batch`'s reusable runs left in the queries, where the device's
/// reads wait for all its work (`reads_wait`), waits without the runs' locks (with `wait`,
/// false when the wait failed): for as long as the queue's newer work keeps the device
/// busy, while a submission is being made on the queue, and, while nothing newer was
/// submitted, for [`SETTLE`] after the batch completed (`completed_at`, when traceq saw it
/// complete; else from now), once per completion value (`settled`: the last one settled
/// for, so that batches completing together settle once). A resubmission that comes
/// meanwhile has its last run saved by the GPU; the read made under the lock afterwards finds the device idle, so a
/// resubmission that comes during it waits little. Only work whose signal was submitted
/// is seen: a burst submitted without fences or semaphores, or without instrumented
/// command buffers, can still make the read (and a resubmission that comes during it)
/// wait. Returns the latest signal of the queue known complete now (0 when not waited for):
/// the reads check again, under each run's lock, for work newer than that.
pub fn settle_before_reading(
    reads_wait: bool,
    batch: &Batch,
    (completed_at, settled): (Option<Instant>, &mut u64),
    mut wait: impl FnMut(&QueueContext, &Completion) -> bool,
) -> u64 {
    let Completion::Timeline { value: own, .. } = batch.completion else {
        return 0;
    };
    if !reads_wait || !batch.traces.iter().any(|t| t.tracked()) {
        return own;
    }
    let started = Instant::now();
    let settle_from = (own > *settled).then(|| completed_at.unwrap_or(started));
    *settled = (*settled).max(own);
    let mut waited_for = 0;
    loop {
        let left = batch
            .traces
            .iter()
            .any(|t| t.run_in_queries(batch.submission));
        if !left {
            return own.max(waited_for);
        }
        let latest = batch.queue.latest_signal();
        let latest_value = match latest {
            Some(Completion::Timeline { value, .. }) => value,
            _ => 0,
        };
        match latest {
            // Work submitted since: wait for it (the read would).
            Some(latest) if latest_value > waited_for => {
                waited_for = latest_value;
                if !wait(&batch.queue, &latest) {
                    return own.max(waited_for);
                }
            }
            // A submission is being made (the driver may have its work already): its
            // signal comes when the call returns.
            _ if batch.queue.signal_being_made() && started.elapsed() < BEING_MADE => {
                std::thread::sleep(SETTLE_POLL)
            }
            // Nothing newer yet: the application may be about to submit it.
            _ if latest_value <= own && settle_from.is_some_and(|at| at.elapsed() < SETTLE) => {
                std::thread::sleep(SETTLE_POLL)
            }
            _ => return own.max(waited_for),
        }
    }
}
