//! A command buffer's trace as recorded (frozen at `vkEndCommandBuffer`), shared by every
//! batch that submits the command buffer, with the traces of the secondary command buffers
//! it executes. Its chunks go back to the pool when the last holder is gone, which is never
//! before the last batch that reads them has been processed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ash::vk;
use parking_lot::Mutex;

use super::chunk::{ChunkPool, RecordedEvent};
use crate::gpu::queue_context::{CopyRange, QueryRange};

/// A secondary command buffer executed by a recording: its trace and where its events go
/// among the executing trace's (`position` events came before it).
pub struct Child {
    pub position: u32,
    pub trace: Arc<RecordedTrace>,
}

pub struct RecordedTrace {
    pub cmd: vk::CommandBuffer,
    pub chunks: Vec<QueryRange>,
    /// The queries read, with their slots relative to this trace's readback region.
    pub copies: Vec<CopyRange>,
    pub events: Vec<RecordedEvent>,
    pub strings: Vec<u8>,
    pub children: Vec<Child>,
    /// Queries written by one execution of this command buffer alone, in readback order.
    pub slots: u32,
    pub complete: bool,
    /// Recorded with `ONE_TIME_SUBMIT`: it runs at most once.
    pub one_time: bool,
    /// Its queries are reset (on the host) and no submission has run it yet.
    armed: AtomicBool,
    /// A run left its queries written (it was read from them, not copied and reset): they
    /// are reset on the host when the trace goes.
    written: AtomicBool,
    /// The last batch that ran this trace: its queue and the timeline value that signals
    /// its copy, so that a later run on another queue re-arms only after that copy.
    pub last_run: Mutex<Option<LastRun>>,
    pool: Arc<ChunkPool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastRun {
    pub queue: vk::Queue,
    pub semaphore: vk::Semaphore,
    pub value: u64,
}

impl RecordedTrace {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cmd: vk::CommandBuffer,
        chunks: Vec<QueryRange>,
        copies: Vec<CopyRange>,
        events: Vec<RecordedEvent>,
        strings: Vec<u8>,
        children: Vec<Child>,
        slots: u32,
        complete: bool,
        one_time: bool,
        pool: Arc<ChunkPool>,
    ) -> RecordedTrace {
        pool.trace_recorded();
        let armed = AtomicBool::new(pool.resets_on_host());
        RecordedTrace {
            cmd,
            chunks,
            copies,
            events,
            strings,
            children,
            slots,
            complete,
            one_time,
            armed,
            written: AtomicBool::new(false),
            last_run: Mutex::new(None),
            pool,
        }
    }

    /// This trace and its children's, depth first (the order of their readback regions).
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a RecordedTrace)) {
        f(self);
        for child in &self.children {
            child.trace.visit(f);
        }
    }

    /// Whether this is the trace's first run with its queries reset on the host, and alone
    /// (no secondary's trace inside): then its submission needs neither a re-arm nor a copy.
    /// A run counts once taken, whatever path its submission then goes.
    pub fn take_armed_run(&self) -> bool {
        self.armed.swap(false, Ordering::Relaxed) && self.one_time && self.children.is_empty()
    }

    /// A run that is read from the queries themselves was submitted.
    pub fn ran_without_reset(&self) {
        self.written.store(true, Ordering::Relaxed);
    }

    /// Events of this trace and its children.
    pub fn event_count(&self) -> u64 {
        let mut n = 0;
        self.visit(&mut |t| n += t.events.len() as u64);
        n
    }
}

impl Drop for RecordedTrace {
    fn drop(&mut self) {
        self.pool.trace_dropped();
        // Relaxed: the batch that ran it completed, and traceq dropped its hold, before this.
        let written = self.written.load(Ordering::Relaxed);
        self.pool
            .release(self.chunks.iter().map(|c| c.pool), written);
        self.pool
            .spare_events
            .give(std::mem::take(&mut self.events));
        self.pool
            .spare_chunks
            .give(std::mem::take(&mut self.chunks));
        self.pool
            .spare_copies
            .give(std::mem::take(&mut self.copies));
    }
}
