//! What a tracepoint needs to record into a command buffer's trace.

use std::sync::Arc;

use ash::vk;

use super::chunk::ChunkPool;
use super::query_slots::Place;
use crate::gpu::interface::Timestamps;
use crate::trace::objects::Objects;

/// What a tracepoint needs to record: the command buffer, where to get chunks, and what the
/// layer knows of the application's objects (for arguments).
pub struct Recorder<'a> {
    pub timestamps: Timestamps<'a>,
    pub chunks: &'a Arc<ChunkPool>,
    pub objects: &'a Objects,
    pub cmd: vk::CommandBuffer,
}

impl Recorder<'_> {
    /// Writes the tracepoint's timestamp at `place`: after the work before it (an end) or as
    /// the work after it starts.
    #[inline(always)]
    pub fn write_timestamp(&self, end_of_pipe: bool, place: Place) {
        // SAFETY: the command buffer is recording (the application is inside a call that
        // records into it) and every batch that runs it re-arms the query first.
        unsafe {
            self.timestamps
                .write(self.cmd, end_of_pipe, place.pool, place.query)
        };
    }
}
