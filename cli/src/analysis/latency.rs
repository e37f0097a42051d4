//! From submit to execution: for each batch whose trace says when it was submitted (on the
//! GPU clock), the time until its first event, the GPU starting its work. This is what a
//! queue backed up behind earlier work, or a driver slow to hand work to the GPU, shows as.

use crate::analysis::stats::Summary;
use crate::trace::Trace;

/// The submit-to-start latencies of `trace`'s batches that carry a submit time. A submit
/// time after the first event (clock pairing error) counts as 0.
pub fn submit_to_start(trace: &Trace) -> Summary {
    let mut latencies: Vec<u64> = trace
        .batches
        .iter()
        .filter_map(|b| Some(b.events.first()?.ns.saturating_sub(b.submit_ns?)))
        .collect();
    Summary::of(&mut latencies)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Batch, Event};

    fn batch(submit_ns: Option<u64>, first: u64) -> Batch {
        Batch {
            device: 0,
            number: 1,
            queue: None,
            frame: 0,
            submission: 1,
            thread: None,
            submit_ns,
            events: vec![Event::at(first, "start_cmd_buffer", "")],
        }
    }

    #[test]
    fn batches_without_a_submit_time_are_left_out() {
        let trace = Trace {
            batches: vec![
                batch(Some(1_000), 31_000),
                batch(None, 50_000),
                batch(Some(60_000), 70_000),
                // Paired clocks a little off: the submit after the start counts as 0.
                batch(Some(80_500), 80_000),
            ],
            origins: Vec::new(),
            notes: vec![],
        };
        let s = submit_to_start(&trace);
        assert_eq!((s.count, s.min, s.max, s.p50), (3, 0, 30_000, 10_000));
        assert_eq!(submit_to_start(&Trace::default()).count, 0);
    }
}
