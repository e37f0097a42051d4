//! The queue's work as traceq reads a batch's runs left in the queries, on a device whose
//! reads wait for all its work (see `trace::record::recorded_trace::Quiet`): what was
//! submitted since the batch settled is waited for before a run is read under its lock.

use std::time::Duration;

use crate::gpu::interface::{Completion, QueueContext};
use crate::trace::record::recorded_trace::Quiet;

/// The latest signal made on `queue`'s timeline (0: none).
fn latest_value(queue: &QueueContext) -> u64 {
    match queue.latest_signal() {
        Some(Completion::Timeline { value, .. }) => value,
        _ => 0,
    }
}

/// `wait`: traceq's bounded wait for a completion (false when it failed).
pub struct QueueQuiet<'a, W: FnMut(&QueueContext, &Completion) -> bool> {
    pub wait: W,
    pub queue: &'a QueueContext,
    pub reads_wait: bool,
    /// The latest signal the device settled for.
    pub settled_for: u64,
}

impl<W: FnMut(&QueueContext, &Completion) -> bool> Quiet for QueueQuiet<'_, W> {
    fn newer_work(&self) -> bool {
        self.reads_wait
            && (latest_value(self.queue) > self.settled_for || self.queue.signal_being_made())
    }

    fn settle(&mut self) {
        match self.queue.latest_signal() {
            Some(latest @ Completion::Timeline { value, .. }) if value > self.settled_for => {
                self.settled_for = value;
                (self.wait)(self.queue, &latest);
            }
            // A submission being made: its signal comes when the call returns.
            _ => std::thread::sleep(Duration::from_micros(50)),
        }
    }
}
