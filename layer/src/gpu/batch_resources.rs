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
    pub(super) segments: Vec<SegmentCommands>,
    /// The first pair again, held inline: a submission of one segment (most) reads it
    /// without reaching into the list's storage.
    pub(super) first: Option<SegmentCommands>,
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
            first: None,
            used: 0,
            readback: None,
            fence: vk::Fence::null(),
            recipe: None,
            fingerprint: 0,
        }
    }

    pub fn used(&self) -> &[SegmentCommands] {
        match (self.used, &self.first) {
            (1, Some(first)) => std::slice::from_ref(first),
            _ => &self.segments[..self.used],
        }
    }

    /// Adds a pair for one more segment.
    pub fn push(&mut self, pair: SegmentCommands) {
        self.first.get_or_insert(pair);
        self.segments.push(pair);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    fn pair(n: u64) -> SegmentCommands {
        SegmentCommands {
            rearm: vk::CommandBuffer::from_raw(2 * n),
            copy: vk::CommandBuffer::from_raw(2 * n + 1),
        }
    }

    #[test]
    fn the_pairs_used_are_the_first_ones_whether_one_or_several() {
        let mut res = BatchResources::empty();
        assert!(res.used().is_empty());
        for n in 1..=3 {
            res.push(pair(n));
        }
        res.used = 1;
        assert_eq!(res.used().len(), 1);
        assert_eq!(res.used()[0].copy, pair(1).copy);
        res.used = 3;
        let copies: Vec<_> = res.used().iter().map(|p| p.copy).collect();
        assert_eq!(copies, [pair(1).copy, pair(2).copy, pair(3).copy]);
    }
}
