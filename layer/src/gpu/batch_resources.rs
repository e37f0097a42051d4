//! What one traced submission needs on top of the application's work: the layer's command
//! buffers, the readback their copies write to, and (in fence mode) the batch's fence.

use ash::vk;

use super::completion::Completion;
use super::readback::Readback;
use super::recipe::Recipe;
use super::segments::SegmentCommands;

/// A submission's layer command buffers, recorded.
pub struct RecordedWrap {
    pub resources: BatchResources,
    pub completion: Completion,
    /// `Some(error)` when no readback buffer could be had: the re-arms are recorded (the
    /// application's queries stay valid) but nothing is copied, so the batch is untimed.
    pub untimed: Option<vk::Result>,
}

/// What one traced submission needs on top of the application's work.
pub struct BatchResources {
    /// One pair per segment; more are allocated when a submission has more segments.
    pub segments: Vec<SegmentCommands>,
    /// How many of `segments` this batch uses.
    pub used: usize,
    pub readback: Option<Readback>,
    /// Only in fence mode.
    pub fence: vk::Fence,
    /// What the command buffers hold, when they can run again as recorded.
    pub recipe: Option<Box<Recipe>>,
    pub(super) fingerprint: u64,
}

impl BatchResources {
    /// Resources with no command buffers, readback or fence yet.
    pub fn empty() -> BatchResources {
        BatchResources {
            segments: Vec::new(),
            used: 0,
            readback: None,
            fence: vk::Fence::null(),
            recipe: None,
            fingerprint: 0,
        }
    }

    pub fn used(&self) -> &[SegmentCommands] {
        &self.segments[..self.used]
    }
}
