//! Runs of a tracked trace taken out of its queries before traceq had them: read on the
//! host by the resubmission that found them, or saved by the GPU (copied into a buffer of
//! the layer's by a command buffer that runs before the resubmission's), kept by submission
//! until traceq asks for them. Only under the trace's lock (see `super::Reruns`).

use std::collections::VecDeque;

use ash::vk;

/// Values of runs taken early and kept for traceq, per trace: 1 MiB, thousands of runs of
/// a small command buffer (a debug build under validation, on a loaded machine, saw
/// traceq hundreds of runs behind a command buffer resubmitted in a loop). Beyond it the
/// oldest is dropped, and counted lost when traceq finds it missing. (Each run is also a
/// batch waiting for traceq, which `traceq::MAX_PENDING_BATCHES` bounds.)
pub(super) const EARLY_VALUES: usize = 1 << 17;

/// A run's values copied out of its queries by the GPU: the layer's resources that hold
/// the copy, held by value (a save allocates nothing).
pub trait SavedRun: Send {
    /// How the submission that carries the copy completes, once it was made.
    type Completion;
    /// The submission that carries the copy was made, and completes at `completion`.
    fn made(&mut self, completion: Self::Completion);
    /// Waits for the copy to complete, reads its values into `out` (when given) and gives
    /// the copy's resources back. Dropped unfinished, it keeps them away from reuse until
    /// the device goes (the copy may still be pending).
    fn finish(self, out: Option<&mut [u64]>) -> Result<(), vk::Result>;
    /// The submission that was to carry the copy was not made: the resources go back.
    fn unused(self);
}

/// Where a run taken early is.
pub(super) enum Values<S> {
    /// Read on the host by the resubmission: the values, or why they could not be read.
    Read(Vec<u64>, Result<(), vk::Result>),
    /// To be saved by the GPU in submission `by`, which is being made (with the copy once
    /// the layer's command buffers for it were had).
    Saving {
        by: u64,
        copy: Option<S>,
    },
    Saved(S),
}

/// What [`EarlyRuns::take`] found.
pub(super) enum Found<S> {
    Taken(Values<S>),
    /// Its save is being made: ask again.
    Saving,
    Missing,
}

struct Early<S> {
    submission: u64,
    values: Values<S>,
}

pub(super) struct EarlyRuns<S> {
    runs: VecDeque<Early<S>>,
    /// Emptied value lists, kept so that reading early allocates nothing in the steady state.
    spare: Vec<Vec<u64>>,
}

impl<S> Default for EarlyRuns<S> {
    fn default() -> Self {
        EarlyRuns {
            runs: VecDeque::new(),
            spare: Vec::new(),
        }
    }
}

impl<S: SavedRun> EarlyRuns<S> {
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// Makes room for one more run of `slots` values, dropping the oldest if need be:
    /// whether one was dropped.
    fn room(&mut self, slots: usize) -> bool {
        if (self.runs.len() + 1) * slots.max(1) <= EARLY_VALUES {
            return false;
        }
        if let Some(dropped) = self.runs.pop_front() {
            self.recycle(dropped.values);
        }
        true
    }

    /// Ready for an early read of `slots` values that allocates nothing on the thread that
    /// makes it (a submission): a spare list that holds them and room for one more run.
    /// traceq calls it as it reads a run the usual way, once per recording in effect.
    pub fn provision(&mut self, slots: usize) {
        match self.spare.last_mut() {
            Some(spare) if spare.capacity() >= slots => {}
            Some(spare) => spare.reserve_exact(slots - spare.len()),
            None => self.spare.push(Vec::with_capacity(slots)),
        }
        self.runs.reserve(1);
    }

    /// The run of `submission`, read now by `read` into `slots` values. Whether an older run
    /// was dropped for room.
    pub fn push_read(
        &mut self,
        submission: u64,
        slots: usize,
        read: impl FnOnce(&mut [u64]) -> Result<(), vk::Result>,
    ) -> bool {
        let mut values = self.spare.pop().unwrap_or_default();
        values.clear();
        values.resize(slots, 0);
        let result = read(&mut values);
        let dropped = self.room(slots);
        self.runs.push_back(Early {
            submission,
            values: Values::Read(values, result),
        });
        dropped
    }

    /// The run of `submission` is to be saved by the GPU in submission `by`. Whether an
    /// older run was dropped for room.
    pub fn push_saving(&mut self, submission: u64, by: u64, slots: usize) -> bool {
        let dropped = self.room(slots);
        self.runs.push_back(Early {
            submission,
            values: Values::Saving { by, copy: None },
        });
        dropped
    }

    /// The copy that submission `by` saves a run with; given back when nothing waits for
    /// it any more (dropped for room).
    pub fn prepared(&mut self, by: u64, copy: S) -> Result<(), S> {
        match self.saving_by(by) {
            Some(Values::Saving { copy: slot, .. }) => {
                *slot = Some(copy);
                Ok(())
            }
            _ => Err(copy),
        }
    }

    /// Submission `by`, which saves a run, was made and completes at `completion`.
    pub fn made(&mut self, by: u64, completion: S::Completion) {
        let Some(values) = self.saving_by(by) else {
            return;
        };
        if let Values::Saving {
            copy: Some(mut copy),
            ..
        } = std::mem::replace(values, Values::Saving { by, copy: None })
        {
            copy.made(completion);
            *values = Values::Saved(copy);
        }
    }

    /// Submission `by`, which was to save a run, was not made: the run it was to save (its
    /// submission), forgotten here (it is still in the queries), and its copy if it had one.
    pub fn unmade(&mut self, by: u64) -> Option<(u64, Option<S>)> {
        let at = self
            .runs
            .iter()
            .position(|e| matches!(e.values, Values::Saving { by: b, .. } if b == by))?;
        let early = self.runs.remove(at)?;
        match early.values {
            Values::Saving { copy, .. } => Some((early.submission, copy)),
            _ => None,
        }
    }

    fn saving_by(&mut self, by: u64) -> Option<&mut Values<S>> {
        self.runs
            .iter_mut()
            .map(|e| &mut e.values)
            .find(|v| matches!(v, Values::Saving { by: b, .. } if *b == by))
    }

    /// The run of `submission`, taken out unless its save is still being made.
    pub fn take(&mut self, submission: u64) -> Found<S> {
        let Some(at) = self.runs.iter().position(|e| e.submission == submission) else {
            return Found::Missing;
        };
        if let Values::Saving { .. } = self.runs[at].values {
            return Found::Saving;
        }
        match self.runs.remove(at) {
            Some(early) => Found::Taken(early.values),
            None => Found::Missing,
        }
    }

    /// A value list taken out with [`Self::take`], for reuse.
    pub fn give(&mut self, values: Vec<u64>) {
        self.spare.push(values);
    }

    fn recycle(&mut self, values: Values<S>) {
        if let Values::Read(values, _) = values {
            self.spare.push(values);
        }
    }

    /// Forgets every run (a new recording).
    pub fn clear(&mut self) {
        while let Some(early) = self.runs.pop_front() {
            self.recycle(early.values);
        }
    }
}
