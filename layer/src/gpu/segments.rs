//! What the layer's command buffers around a traced submission are recorded from: the
//! submission is cut into segments (where a command buffer runs a second time), and each
//! segment has queries to re-arm before it and queries to copy after it. The trace core
//! builds these from its recordings; [`super::layer_commands`] records them.

use ash::vk;

/// A contiguous run of written queries at the start of one query pool (what a batch
/// re-arms), and the pool's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueryRange {
    pub pool: vk::QueryPool,
    pub count: u32,
    pub size: u32,
}

/// Queries whose values a batch reads, and where in its readback they go (in 64-bit
/// slots). In a multiview render pass a timestamp takes one query per view; only the first
/// holds the time, the others are read with it and ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CopyRange {
    pub pool: vk::QueryPool,
    pub first: u32,
    pub count: u32,
    pub slot: u32,
    /// Values a query writes: 1 for a timestamp, a statistics pool's statistics.
    pub values: u32,
}

/// How a submission's queries are made ready to be written again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arming {
    /// A re-arm before each segment resets its queries.
    pub rearm: bool,
    /// Each copy resets the queries it read.
    pub reset_after_copy: bool,
}

/// What one segment of a submission re-arms before it runs and copies after.
#[derive(Clone, Copy)]
pub struct Segment<'a> {
    pub resets: &'a [QueryRange],
    pub copies: &'a [CopyRange],
}

/// The layer's command buffers around one segment of a submission.
#[derive(Clone, Copy, Debug)]
pub struct SegmentCommands {
    pub rearm: vk::CommandBuffer,
    pub copy: vk::CommandBuffer,
}
