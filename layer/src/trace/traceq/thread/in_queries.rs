//! A completed batch whose timestamps stayed in its queries (one-time command buffers,
//! tracked reusable runs): settled where reading waits for the device, read a chunk at a
//! time as its events go, and cut short at the thread's deadline.

use std::sync::Arc;

use super::super::query_window::QueryTimestamps;
use super::super::queue_quiet::QueueQuiet;
use super::super::settle::settle_before_reading;
use super::super::write_deadline::CUT;
use super::Traceq;
use crate::gpu::interface::{Completion, QueueContext};
use crate::trace::record::recorded_trace::RecordedTrace;
use crate::trace::submit::batch::Batch;

impl Traceq {
    /// Writes `batch` (of `total` queries) from its queries. Returns the events a reading
    /// left out beyond those counted already, or `None` when none could be read.
    pub(super) fn write_from_queries(&mut self, batch: &Batch, total: u32) -> Option<u64> {
        let reads_wait = self.backend.query_reads_wait();
        let mut settled = self.settled;
        let when = (self.completed_at, &mut settled);
        let settled_for = settle_before_reading(reads_wait, batch, when, |queue, completion| {
            self.wait_for(queue, completion)
        });
        self.settled = settled;
        let traces = (&batch.traces[..], batch.submission);
        // Out of `self` while the batch is written.
        let mut scratch = std::mem::take(&mut self.query_scratch);
        // Past the deadline the reads stop (the events left are counted as cut).
        let deadline = Arc::clone(&self.deadline);
        let read = move |t: &RecordedTrace, copy: &_, out: &mut [u64]| {
            if deadline.passed() {
                Err(CUT)
            } else {
                t.read_copy(copy, out)
            }
        };
        let mut quiet = QueueQuiet {
            wait: |queue: &QueueContext, completion: &Completion| self.wait_for(queue, completion),
            queue: &batch.queue,
            reads_wait,
            settled_for,
        };
        let timestamps = QueryTimestamps::new(traces, &mut scratch, read, &mut quiet);
        let unread = match timestamps {
            Ok(mut values) => {
                let unread = self.write(batch, total, &mut values);
                match values.failed {
                    Some(CUT) => self.cut.add(unread.unwrap_or(0)),
                    Some(e) => self.say_read_failed(e),
                    None => {}
                }
                unread
            }
            Err(CUT) => {
                self.cut.add(batch.event_count());
                None
            }
            Err(e) => {
                self.say_read_failed(e);
                None
            }
        };
        self.query_scratch = scratch;
        unread
    }

    pub(super) fn say_read_failed(&mut self, e: ash::vk::Result) {
        if !self.read_failed {
            self.read_failed = true;
            log::error!("device {}: reading a batch's timestamps failed ({e}); such batches are dropped and counted", self.device_index);
        }
    }
}
