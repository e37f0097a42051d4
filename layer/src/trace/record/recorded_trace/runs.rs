//! A trace's runs between submissions: what a submission takes
//! ([`RecordedTrace::take_armed_run`]), how its run went down (its timestamps left in the
//! queries, copied, saved by the GPU, untimed, or not made), and traceq's side once the run
//! completed (see `Reruns`).

use std::sync::atomic::Ordering;

use ash::vk;

use super::super::saved_copy::SavedCopy;
use super::{Quiet, RecordedTrace, Taken};
use crate::gpu::interface::Completion;

/// A one-time run of more queries than this is copied by the layer's command buffers
/// (wrapped) rather than left in its queries for traceq to read on the host. Reading
/// queries costs more than reading memory on every driver (Lavapipe: about 40 ns a query,
/// and each `vkGetQueryPoolResults` waits for the device to go idle), and the copy's
/// command buffer (one `vkCmdCopyQueryPoolResults` a chunk, a few microseconds of the
/// submitting thread) is then under 2% of what the application spent recording the
/// 2,048 traced commands or more it times.
pub const READ_FROM_QUERIES_MAX: u32 = 4096;

impl RecordedTrace {
    /// Whether this run of the trace (in `submission`) finds its queries reset on the host,
    /// with no secondary's trace inside: then it needs neither a re-arm nor a copy. A
    /// one-time trace's first run, of at most [`READ_FROM_QUERIES_MAX`] queries; a tracked
    /// reusable trace's run when its last run was read or copied, or could be read now
    /// (see [`Reruns::take`]). A run counts once taken, whatever path its submission then
    /// goes ([`Self::went`]).
    pub fn take_armed_run(&self, submission: u64) -> Taken {
        if let Some(hw) = &self.hardware {
            hw.take_run(submission, self.pool.backend());
        }
        if self.tracked {
            return self.reruns.take(submission, self.run_values(), self);
        }
        // Loaded first: a reusable trace's runs then leave the line unwritten.
        let armed = self.armed.load(Ordering::Relaxed)
            && self.armed.swap(false, Ordering::Relaxed)
            && self.one_time
            && self.children.is_empty()
            && self.slots <= READ_FROM_QUERIES_MAX;
        if armed {
            Taken::Armed
        } else {
            Taken::No
        }
    }

    /// The run of `submission` goes with its timestamps left in the queries
    /// (`in_queries`) or copied by the layer's command buffers.
    pub fn went(&self, submission: u64, in_queries: bool) {
        if in_queries {
            // Its chunks are reset on the host when the trace goes. Loaded first: a
            // resubmission then leaves the line as it is.
            if !self.written.load(Ordering::Relaxed) {
                self.written.store(true, Ordering::Relaxed);
            }
        } else if self.tracked {
            self.reruns.wrapped(submission);
        }
    }

    /// Submission `by`, which took [`Taken::Save`], saves the last run with `copy`.
    pub fn save_prepared(&self, by: u64, copy: SavedCopy) {
        self.reruns.prepared(by, copy);
    }

    /// Submission `by` was made and completes at `completion`: a save it carries for this
    /// trace is read from once that completed.
    pub fn save_made(&self, by: u64, completion: Completion) {
        if self.tracked {
            self.reruns.made(by, completion);
        }
    }

    /// Submission `by`, which took [`Taken::Save`], cannot save the last run: it is read on
    /// the host instead.
    pub fn read_instead_of_saving(&self, by: u64) {
        self.reruns
            .read_instead_of_saving(by, self.run_values(), self);
    }

    /// The submission that took a run went down without the layer's part (the layer could
    /// not prepare it): the run writes the queries, unread. They are reset on the host when
    /// the trace goes, or (tracked) by its next submission.
    pub fn ran_untimed(&self, submission: u64) {
        if let Some(hw) = &self.hardware {
            hw.ran_untimed(submission, self.pool.backend());
        }
        self.went(submission, true);
        if self.tracked {
            self.reruns.ran_untimed(submission, self.run_values(), self);
        }
    }

    /// The submission that took a run was not made.
    pub fn not_submitted(&self, submission: u64) {
        if let Some(hw) = &self.hardware {
            hw.not_submitted(submission);
        }
        if self.tracked {
            self.reruns.not_submitted(submission);
        }
    }

    /// The values a tracked run leaves: its timestamps, then its pipeline statistics where
    /// its slot holds them (see `record::recorded_stats::Source::Run`).
    pub fn run_values(&self) -> usize {
        self.slots as usize + self.statistics.as_ref().map_or(0, |s| s.in_run() as usize)
    }

    /// What the layer's copy after a wrapped run copies of the trace's pipeline statistics
    /// (see `RecordedStats::copied`).
    pub fn copied_statistics(&self) -> Option<(vk::QueryPool, u32, u32)> {
        self.statistics.as_ref()?.copied()
    }

    /// Whether the trace's runs are tracked between submissions (see [`Reruns`]).
    pub fn tracked(&self) -> bool {
        self.tracked
    }

    /// Whether a tracked trace's run of `submission` is still in its queries (no later
    /// submission took it).
    pub fn run_in_queries(&self, submission: u64) -> bool {
        self.tracked && self.reruns.holds(submission)
    }

    /// A tracked trace's completed run of `submission`, left in the queries: its values,
    /// wherever they are now (see [`Reruns::read`]).
    pub fn read_run(
        &self,
        submission: u64,
        out: &mut [u64],
        quiet: &mut dyn Quiet,
    ) -> Result<(), vk::Result> {
        // A run in its slot is memory: no read waits for the device, nothing to settle.
        let mut no_wait = super::super::reruns::NoWait;
        let quiet: &mut dyn Quiet = if self.run_slot.is_some() {
            &mut no_wait
        } else {
            quiet
        };
        self.reruns.read_settled(submission, out, self, quiet)
    }

    /// The completed run of `submission` is done with, its counters written or not: a
    /// reusable recording's hardware counter queries are reset for its next run if nothing
    /// read them.
    pub fn hardware_done(&self, submission: u64) {
        if let Some(hw) = &self.hardware {
            hw.run_done(submission, self.pool.backend());
        }
    }

    /// A tracked trace's completed run of `submission` is done with: not written, or
    /// copied by the layer (its copy reset the queries).
    pub fn run_done(&self, submission: u64, copied: bool) {
        if !self.tracked {
            return;
        }
        if copied {
            self.reruns.copied(submission);
        } else {
            self.reruns.discard(submission, self);
        }
    }
}
