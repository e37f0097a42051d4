//! A completed batch's GPU counters (pipeline statistics or hardware counters), read from
//! each trace's queries and listed in the order its events go out (`super::events`), where
//! each range that has them names its entry.

use super::events::Timestamps;
use crate::gpu::interface::Backend;
use crate::trace::record::recorded_stats::Source;
use crate::trace::record::recorded_trace::RecordedTrace;
use crate::trace::record::statistics::Counters;
use crate::trace::submit::batch::Batch;

/// The batch's counters, in the order their end events go out through its traces and
/// their children (spliced where they ran); `None` where a trace's could not be read. A
/// one-time run's are read from its queries, a tracked run's statistics taken from its
/// values in `values`, a reusable run's hardware counters from wherever the run is (see
/// `record::hardware_runs`). Empty, without a read, when no trace has counters.
pub fn collect(
    batch: &Batch,
    backend: &Backend,
    values: &impl Timestamps,
) -> Vec<Option<Counters>> {
    let mut out = Vec::new();
    let run = (backend, batch.submission);
    for trace in &batch.traces {
        collect_trace(trace, run, values, &mut out);
    }
    out
}

/// `run`: the device's backend, and the submission that ran the batch.
fn collect_trace(
    trace: &RecordedTrace,
    run: (&Backend, u64),
    values: &impl Timestamps,
    out: &mut Vec<Option<Counters>>,
) {
    let (backend, submission) = run;
    let read = match (&trace.statistics, &trace.hardware) {
        (Some(s), _) => Some(match s.source {
            Source::Pool => s.read(backend),
            Source::Run(_) | Source::Copied(_) => {
                values.run_statistics(trace).map(|run| s.from_run(run))
            }
            Source::Unread => None,
        }),
        (None, Some(h)) => Some(h.read_run(submission, backend)),
        (None, None) => None,
    };
    let mut sums = match &read {
        Some(Some(sums)) => Some(sums.iter()),
        _ => None,
    };
    let mut children = trace.children.iter().peekable();
    let mut counted = trace.counted_events().peekable();
    for i in 0..trace.events.len() {
        while let Some(child) = children.next_if(|c| c.position as usize <= i) {
            collect_trace(&child.trace, run, values, out);
        }
        if counted.next_if_eq(&(i as u32)).is_some() {
            out.push(sums.as_mut().and_then(|v| v.next()).copied());
        }
    }
    for child in children {
        collect_trace(&child.trace, run, values, out);
    }
}
