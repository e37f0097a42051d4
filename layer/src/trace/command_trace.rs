//! The trace of one command buffer (u_trace's `struct u_trace`): the chunks its timestamps
//! are written to and the events recorded with them, in recording order.
//!
//! While the application records, the trace is mutable and owned by the command buffer's
//! entry (the application synchronises a command buffer externally, so no lock is contended).
//! `vkEndCommandBuffer` freezes it into a [`RecordedTrace`] shared by every batch that
//! submits the command buffer; its chunks go back to the pool when the last of them is gone,
//! which is never before the last batch that reads them has been processed.

use std::sync::Arc;

use ash::vk;

use super::chunk::{ChunkPool, RecordedEvent};
use super::tracepoints::{LabelRef, Payload};
use crate::gpu::query_pool::CHUNK_QUERIES;
use crate::gpu::queue_context::QueryRange;
use crate::loader::dispatch::DeviceDispatch;

/// Longest label kept, in bytes.
pub const MAX_LABEL: usize = 256;

/// What a tracepoint needs to record: the command buffer and where to get chunks.
pub struct Recorder<'a> {
    pub dispatch: &'a DeviceDispatch,
    pub chunks: &'a Arc<ChunkPool>,
    pub cmd: vk::CommandBuffer,
}

pub struct CommandTrace {
    pub pool: vk::CommandPool,
    pub family: u32,
    pub level: vk::CommandBufferLevel,
    /// Chunks being filled, with the number of queries used in each.
    chunks: Vec<QueryRange>,
    events: Vec<RecordedEvent>,
    /// Labels of this recording, referenced by `LabelRef`s in payloads.
    strings: Vec<u8>,
    /// Queries used in all chunks so far (the next event's readback slot).
    slots: u32,
    /// False once a chunk could not be had: the trace is then left out of the output.
    complete: bool,
    recorded: Option<Arc<RecordedTrace>>,
}

impl CommandTrace {
    pub fn new(pool: vk::CommandPool, family: u32, level: vk::CommandBufferLevel) -> Self {
        CommandTrace {
            pool,
            family,
            level,
            chunks: Vec::new(),
            events: Vec::new(),
            strings: Vec::new(),
            slots: 0,
            complete: true,
            recorded: None,
        }
    }

    /// Appends one tracepoint: a timestamp write into the command buffer and its event.
    pub fn append(&mut self, rec: &Recorder<'_>, payload: Payload) {
        if !self.complete {
            return;
        }
        let Some((pool, query)) = self.next_query(rec.chunks) else {
            return;
        };
        let stage = if payload.info().end_of_pipe {
            vk::PipelineStageFlags::BOTTOM_OF_PIPE
        } else {
            vk::PipelineStageFlags::TOP_OF_PIPE
        };
        // SAFETY: the command buffer is recording (the application is inside a vkCmd* or
        // begin/end call for it) and the query was re-armed by every batch that runs it.
        unsafe { (rec.dispatch.fp_v1_0.cmd_write_timestamp)(rec.cmd, stage, pool, query) };
        if self.events.capacity() == 0 {
            self.events = rec.chunks.take_event_list();
        }
        self.events.push(RecordedEvent {
            payload,
            slot: self.slots - 1,
        });
    }

    /// Copies a label into the trace's storage, cut at [`MAX_LABEL`] bytes (labels are
    /// application data of any length and encoding; they are printed lossily).
    pub fn store_label(&mut self, label: &[u8]) -> LabelRef {
        let label = &label[..label.len().min(MAX_LABEL)];
        let offset = self.strings.len() as u32;
        self.strings.extend_from_slice(label);
        LabelRef {
            offset,
            len: label.len() as u32,
        }
    }

    fn next_query(&mut self, pool: &ChunkPool) -> Option<(vk::QueryPool, u32)> {
        if self.chunks.last().is_none_or(|c| c.count == CHUNK_QUERIES) {
            match pool.acquire() {
                Ok(qp) => self.chunks.push(QueryRange { pool: qp, count: 0 }),
                Err(e) => {
                    log::error!("could not create a timestamp query pool ({e}); a command buffer stays untimed");
                    self.complete = false;
                    return None;
                }
            }
        }
        let chunk = self.chunks.last_mut()?;
        let query = chunk.count;
        chunk.count += 1;
        self.slots += 1;
        Some((chunk.pool, query))
    }

    /// Forgets everything recorded (begin, reset, free). Chunks of the frozen trace go back
    /// to the pool once no batch holds it; chunks of an unfinished recording were never
    /// submitted and go back now.
    pub fn reset(&mut self, pool: &ChunkPool) {
        self.recorded = None;
        pool.release(self.chunks.drain(..).map(|c| c.pool));
        let events = std::mem::take(&mut self.events);
        pool.give_event_list(events);
        self.strings.clear();
        self.slots = 0;
        self.complete = true;
    }

    /// Freezes the recording at `vkEndCommandBuffer`.
    pub fn finish(&mut self, cmd: vk::CommandBuffer, pool: &Arc<ChunkPool>) {
        if self.chunks.is_empty() {
            return;
        }
        self.recorded = Some(Arc::new(RecordedTrace {
            cmd,
            family: self.family,
            chunks: std::mem::take(&mut self.chunks),
            events: std::mem::take(&mut self.events),
            strings: std::mem::take(&mut self.strings),
            slots: std::mem::replace(&mut self.slots, 0),
            complete: self.complete,
            pool: Arc::clone(pool),
        }));
    }

    /// Whether this recording got tracepoints (its begin was traced).
    pub fn is_instrumented(&self) -> bool {
        !self.chunks.is_empty()
    }

    /// The frozen trace to hand to a batch at submit time.
    pub fn recorded(&self) -> Option<&Arc<RecordedTrace>> {
        self.recorded.as_ref()
    }
}

/// A command buffer's trace as recorded, shared by the batches that submit it.
pub struct RecordedTrace {
    pub cmd: vk::CommandBuffer,
    pub family: u32,
    pub chunks: Vec<QueryRange>,
    pub events: Vec<RecordedEvent>,
    pub strings: Vec<u8>,
    /// Queries written by one execution, in readback order.
    pub slots: u32,
    pub complete: bool,
    pool: Arc<ChunkPool>,
}

impl Drop for RecordedTrace {
    fn drop(&mut self) {
        self.pool.release(self.chunks.iter().map(|c| c.pool));
        self.pool.give_event_list(std::mem::take(&mut self.events));
    }
}
