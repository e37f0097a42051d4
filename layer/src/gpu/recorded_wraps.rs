//! The layer's command buffers of earlier submissions, kept recorded for the next that needs
//! the same: a reusable command buffer submitted again (every frame, in many applications)
//! writes the same queries into the same readback slots, so its copy (and re-arm) can run
//! again as recorded instead of being recorded at every submission.
//!
//! Why: on Lavapipe, recording the copy command buffer at each resubmission cost the
//! submitting thread about 1.7x the application's own small submission (a sampled profile;
//! the resubmission row of `utrace-bench` was 8-12x).
//!
//! What is kept is keyed by its recipe: what the command buffers were recorded from (each
//! segment's queries to reset and to copy, the readback's size, the arming). Two
//! submissions with equal recipes record identical commands, whichever traces they came
//! from (a query pool handed to another trace keeps its handle). The kept resources are
//! bounded by the most batches ever in flight: a submission whose recipe is not kept takes
//! plain free resources first, then the oldest kept ones, and allocates only when there are
//! none.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use super::batch_resources::BatchResources;
use super::recipe::Recipe;
use super::segments::Arming;

/// The arming of resources kept without a recording (never compared: their recording is 0).
const NO_ARMING: Arming = Arming {
    rearm: false,
    reset_after_copy: false,
};

/// Resources whose command buffers are recorded, by the fingerprint of their recipe, and
/// the order they were kept in (oldest first) for taking them back.
#[derive(Default)]
pub struct RecordedWraps {
    by_fingerprint: HashMap<u64, Vec<Kept>, BuildHasherDefault<Fingerprint>>,
    /// (fingerprint, number) in the order kept; entries of resources taken since are
    /// skipped when met, and swept when they outnumber the kept ones.
    order: VecDeque<(u64, u64)>,
    kept: usize,
    next_number: u64,
}

/// Kept resources, the number they were kept under, and the recording (with its arming)
/// their recipe was last recorded or found equal for: copied out of the boxed recipe, so
/// that a resubmission's look-up reads nothing else.
struct Kept {
    number: u64,
    recorded_for: (u64, Arming),
    res: BatchResources,
}

/// Fingerprints are hashes already: the map uses them as they are.
#[derive(Default)]
pub struct Fingerprint(u64);

impl Hasher for Fingerprint {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl RecordedWraps {
    /// Resources kept under `fingerprint` whose recipe `fits`, if any.
    pub fn take(
        &mut self,
        fingerprint: u64,
        fits: impl Fn(&Recipe) -> bool,
    ) -> Option<BatchResources> {
        let kept = self.by_fingerprint.get_mut(&fingerprint)?;
        let at = kept
            .iter()
            .position(|k| k.res.recipe.as_deref().is_some_and(&fits))?;
        // An emptied list stays (with its room) for this recipe's next keeping; `keep`
        // sweeps them when they pile up.
        self.kept -= 1;
        Some(kept.swap_remove(at).res)
    }

    /// Resources kept under `fingerprint` last recorded or found equal for `recording`
    /// (never 0) submitted alone with `arming`, if any: nothing else is compared.
    pub fn take_for(
        &mut self,
        fingerprint: u64,
        recording: u64,
        arming: Arming,
    ) -> Option<BatchResources> {
        if recording == 0 {
            return None;
        }
        let kept = self.by_fingerprint.get_mut(&fingerprint)?;
        let at = kept
            .iter()
            .position(|k| k.recorded_for == (recording, arming))?;
        self.kept -= 1;
        Some(kept.swap_remove(at).res)
    }

    /// Keeps `res` (its recipe says what it holds).
    pub fn keep(&mut self, fingerprint: u64, res: BatchResources) {
        let number = self.next_number;
        self.next_number += 1;
        let recorded_for = res
            .recipe
            .as_deref()
            .map_or((0, NO_ARMING), |r| (r.recorded_for, r.arming));
        self.by_fingerprint
            .entry(fingerprint)
            .or_default()
            .push(Kept {
                number,
                recorded_for,
                res,
            });
        self.order.push_back((fingerprint, number));
        self.kept += 1;
        if self.by_fingerprint.len() > 2 * self.kept + 64 {
            self.by_fingerprint.retain(|_, kept| !kept.is_empty());
        }
        if self.order.len() > 2 * self.kept + 16 {
            let by_fingerprint = &self.by_fingerprint;
            self.order.retain(|(f, n)| {
                by_fingerprint
                    .get(f)
                    .is_some_and(|v| v.iter().any(|k| k.number == *n))
            });
        }
    }

    /// The resources kept longest, to be recorded anew.
    pub fn oldest(&mut self) -> Option<BatchResources> {
        while let Some((fingerprint, number)) = self.order.pop_front() {
            let Some(kept) = self.by_fingerprint.get_mut(&fingerprint) else {
                continue;
            };
            let Some(at) = kept.iter().position(|k| k.number == number) else {
                continue;
            };
            let mut res = kept.swap_remove(at).res;
            self.kept -= 1;
            res.recipe = None;
            return Some(res);
        }
        None
    }

    /// Everything kept (the device is going).
    pub fn drain(&mut self) -> impl Iterator<Item = BatchResources> + '_ {
        self.order.clear();
        self.kept = 0;
        self.by_fingerprint
            .drain()
            .flat_map(|(_, v)| v.into_iter().map(|k| k.res))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::recipe::fingerprint;
    use crate::gpu::segments::{CopyRange, Segment};
    use ash::vk;
    use ash::vk::Handle;

    fn copies(pool: u64) -> Vec<CopyRange> {
        vec![CopyRange {
            pool: vk::QueryPool::from_raw(pool),
            first: 0,
            count: 2,
            slot: 0,
            values: 1,
        }]
    }

    const ARMING: Arming = Arming {
        rearm: false,
        reset_after_copy: true,
    };

    /// Resources recorded from one segment copying `pool`'s first two queries.
    fn recorded(pool: u64) -> (u64, BatchResources) {
        let c = copies(pool);
        let segments = [Segment {
            resets: &[],
            copies: &c,
        }];
        let mut res = BatchResources::empty();
        res.recipe = Some(Box::new(Recipe::of(&segments, 2, ARMING)));
        (fingerprint(&segments, 2, ARMING), res)
    }

    fn take(wraps: &mut RecordedWraps, pool: u64) -> Option<BatchResources> {
        let c = copies(pool);
        let segments = [Segment {
            resets: &[],
            copies: &c,
        }];
        wraps.take(fingerprint(&segments, 2, ARMING), |r| {
            r.matches(&segments, 2, ARMING)
        })
    }

    #[test]
    fn an_equal_recipe_gets_the_kept_resources_and_another_does_not() {
        let mut wraps = RecordedWraps::default();
        let (f, res) = recorded(7);
        wraps.keep(f, res);
        assert!(take(&mut wraps, 8).is_none(), "other queries");
        let taken = take(&mut wraps, 7).expect("the same queries");
        assert!(taken.recipe.is_some(), "still recorded: it runs as it is");
        assert!(take(&mut wraps, 7).is_none(), "taken once");
        assert!(wraps.oldest().is_none());
    }

    #[test]
    fn a_recording_finds_what_was_recorded_for_it_with_its_arming_only() {
        let mut wraps = RecordedWraps::default();
        let (f, mut res) = recorded(7);
        if let Some(recipe) = res.recipe.as_mut() {
            recipe.recorded_for = 41;
        }
        wraps.keep(f, res);
        let rearming = Arming {
            rearm: true,
            ..ARMING
        };
        assert!(wraps.take_for(f, 42, ARMING).is_none(), "another recording");
        assert!(wraps.take_for(f, 41, rearming).is_none(), "another arming");
        assert!(
            wraps.take_for(f ^ 1, 41, ARMING).is_none(),
            "another fingerprint"
        );
        assert!(wraps.take_for(f, 0, ARMING).is_none(), "no recording");
        assert!(wraps.take_for(f, 41, ARMING).is_some());
        assert!(wraps.take_for(f, 41, ARMING).is_none(), "taken once");
    }

    #[test]
    fn resources_of_several_recordings_are_found_by_recipe_not_by_recording() {
        let mut wraps = RecordedWraps::default();
        let (f, res) = recorded(7);
        wraps.keep(f, res);
        assert!(wraps.take_for(f, 0, ARMING).is_none());
        assert!(take(&mut wraps, 7).is_some(), "equal segments still match");
    }

    #[test]
    fn the_oldest_kept_is_taken_back_first_and_forgets_its_recipe() {
        let mut wraps = RecordedWraps::default();
        for pool in 1..=3 {
            let (f, res) = recorded(pool);
            wraps.keep(f, res);
        }
        // Pool 1's taken by its own recipe: the oldest left is pool 2's.
        assert!(take(&mut wraps, 1).is_some());
        let oldest = wraps.oldest().expect("two left");
        assert!(oldest.recipe.is_none(), "to be recorded anew");
        assert!(take(&mut wraps, 2).is_none(), "pool 2's went");
        assert!(take(&mut wraps, 3).is_some());
        assert!(wraps.oldest().is_none());
    }

    #[test]
    fn keeping_and_taking_for_long_keeps_the_order_bounded() {
        let mut wraps = RecordedWraps::default();
        for round in 0..10_000u64 {
            let (f, res) = recorded(round % 50);
            wraps.keep(f, res);
            if round >= 10 {
                assert!(take(&mut wraps, (round - 10) % 50).is_some());
            }
        }
        assert_eq!(wraps.kept, 10);
        assert!(wraps.order.len() <= 2 * wraps.kept + 16);
        assert_eq!(wraps.drain().count(), 10);
    }
}
