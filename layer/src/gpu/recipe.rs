//! What a submission's layer command buffers are recorded from (its recipe), and the
//! fingerprint [`super::recorded_wraps::RecordedWraps`] finds equal recipes by.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use super::segments::{Arming, CopyRange, QueryRange, Segment};

/// What a submission's layer command buffers are recorded from.
#[derive(Debug, PartialEq, Eq)]
pub struct Recipe {
    segments: Vec<(Vec<QueryRange>, Vec<CopyRange>)>,
    total: u32,
    pub arming: Arming,
    /// The recording (the trace core's id of one command buffer's recording) these
    /// commands were last recorded or found equal for, submitted alone; 0 for none. While
    /// that recording lives, its resubmissions run them again without comparing.
    pub recorded_for: u64,
}

impl Recipe {
    pub fn of(segments: &[Segment<'_>], total: u32, arming: Arming) -> Recipe {
        Recipe {
            segments: segments
                .iter()
                .map(|s| (s.resets.to_vec(), s.copies.to_vec()))
                .collect(),
            total,
            arming,
            recorded_for: 0,
        }
    }

    /// Whether `segments` would be recorded as this recipe was (without building one).
    pub fn matches(&self, segments: &[Segment<'_>], total: u32, arming: Arming) -> bool {
        self.total == total
            && self.arming == arming
            && self.segments.len() == segments.len()
            && self
                .segments
                .iter()
                .zip(segments)
                .all(|((r, c), s)| r[..] == *s.resets && c[..] == *s.copies)
    }
}

/// The fingerprint of a recipe, computed from the segments as they come.
pub fn fingerprint(segments: &[Segment<'_>], total: u32, arming: Arming) -> u64 {
    let mut h = DefaultHasher::new();
    segments.len().hash(&mut h);
    for s in segments {
        s.resets.hash(&mut h);
        s.copies.hash(&mut h);
    }
    total.hash(&mut h);
    arming.hash(&mut h);
    h.finish()
}
