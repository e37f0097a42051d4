//! The copies of earlier runs on other queues that a submission's re-arm must follow.

use std::sync::Arc;

use ash::vk;

use crate::trace::record::recorded_trace::RecordedTrace;

/// The copies of earlier runs on other queues that this submission's re-arm must follow:
/// per timeline semaphore, the highest value. (On one queue, submission order and the
/// re-arm's barrier already order it after them. In fence mode there is nothing to wait on
/// across queues; the application's own synchronisation then has to cover the layer's copy,
/// as it does when it waits for its fence.)
pub fn cross_queue_waits(
    queue: vk::Queue,
    traces: &[Arc<RecordedTrace>],
) -> Vec<(vk::Semaphore, u64)> {
    let mut waits: Vec<(vk::Semaphore, u64)> = Vec::new();
    for trace in traces {
        trace.visit(&mut |t| {
            let Some(run) = *t.last_run.lock() else {
                return;
            };
            if run.queue == queue {
                return;
            }
            match waits.iter_mut().find(|(s, _)| *s == run.semaphore) {
                Some((_, v)) => *v = (*v).max(run.value),
                None => waits.push((run.semaphore, run.value)),
            }
        });
    }
    waits
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    use crate::gpu::interface::Backend;
    use crate::trace::health::Health;
    use crate::trace::record::chunk::ChunkPool;
    use crate::trace::record::recorded_trace::{LastRun, TraceParts};

    fn trace(pool: &Arc<ChunkPool>, last: Option<(u64, u64, u64)>) -> Arc<RecordedTrace> {
        let parts = TraceParts {
            complete: true,
            ..Default::default()
        };
        let t = RecordedTrace::new(parts, Arc::clone(pool));
        *t.last_run.lock() = last.map(|(queue, semaphore, value)| LastRun {
            queue: vk::Queue::from_raw(queue),
            semaphore: vk::Semaphore::from_raw(semaphore),
            value,
        });
        Arc::new(t)
    }

    #[test]
    fn a_run_on_another_queue_waits_for_the_last_copy_there() {
        let pool = Arc::new(ChunkPool::new(Backend::inert(), Arc::new(Health::new(0))));
        let (here, there, elsewhere) = (1, 2, 3);
        let traces = [
            trace(&pool, Some((there, 20, 5))),
            trace(&pool, Some((here, 10, 9))),
            trace(&pool, None),
            trace(&pool, Some((there, 20, 7))),
            trace(&pool, Some((elsewhere, 30, 1))),
        ];
        let waits = cross_queue_waits(vk::Queue::from_raw(here), &traces);
        // Per other queue's semaphore, the highest value; nothing for this queue's own runs.
        assert_eq!(
            waits,
            vec![
                (vk::Semaphore::from_raw(20), 7),
                (vk::Semaphore::from_raw(30), 1)
            ]
        );
    }
}
