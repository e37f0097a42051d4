//! A completed batch's pipeline statistics (`GPU_TRACE_COUNTERS=pipeline`), read from each
//! trace's queries and listed in the order its events go out (`super::events`), where
//! each range that has them names its entry.

use std::sync::Arc;

use crate::gpu::interface::Backend;
use crate::trace::record::recorded_trace::RecordedTrace;
use crate::trace::record::statistics::Counters;

/// The indices of `trace`'s events that end a range with statistics, in order.
pub fn range_events(trace: &RecordedTrace) -> impl Iterator<Item = u32> + '_ {
    trace
        .statistics
        .iter()
        .flat_map(|s| s.ranges.iter().map(|r| r.event))
}

/// The batch's counters, in the order [`range_events`] numbers them through `traces` and
/// their children (spliced where they ran); `None` where a trace's could not be read.
/// Empty, without a read, when no trace has statistics.
pub fn collect(traces: &[Arc<RecordedTrace>], backend: &Backend) -> Vec<Option<Counters>> {
    let mut out = Vec::new();
    for trace in traces {
        collect_trace(trace, backend, &mut out);
    }
    out
}

fn collect_trace(trace: &RecordedTrace, backend: &Backend, out: &mut Vec<Option<Counters>>) {
    let read = trace.statistics.as_ref().map(|s| s.read(backend));
    let mut values = match &read {
        Some(Some(values)) => Some(values.iter()),
        _ => None,
    };
    let mut children = trace.children.iter().peekable();
    let mut counted = range_events(trace).peekable();
    for i in 0..trace.events.len() {
        while let Some(child) = children.next_if(|c| c.position as usize <= i) {
            collect_trace(&child.trace, backend, out);
        }
        if counted.next_if_eq(&(i as u32)).is_some() {
            out.push(values.as_mut().and_then(|v| v.next()).copied());
        }
    }
    for child in children {
        collect_trace(&child.trace, backend, out);
    }
}
