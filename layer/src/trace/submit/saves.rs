//! Saves of runs left in the queries (see `trace::record::reruns`): on a device whose query
//! reads wait for all its work, a resubmission that finds its command buffer's last run
//! unread while work is in flight does not read it on the host (that would make the
//! application wait for every piece of that work). The submission runs, before the application's batches, the
//! layer's copy command buffer of that recording (the one a wrapped run of it alone ends
//! with: it copies the queries into its readback, then resets them), and traceq reads the
//! run from that readback once the submission completed. Nothing is allocated for up to
//! `MAX_SAVES` saves a submission: the copies are handed to the traces as they are had,
//! and the submission keeps only their command buffers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ash::vk;
use smallvec::SmallVec;

use crate::gpu::interface::{Arming, QueueContext, RecordedWrap, MAX_SAVES};
use crate::trace::record::recorded_trace::RecordedTrace;
use crate::trace::record::saved_copy::SavedCopy;
use crate::trace::DeviceTracer;

/// The traces of a submission (their positions in it) whose last runs it saves: on the
/// stack up to [`MAX_SAVES`] (several tracked command buffers in one call, each
/// resubmitted before traceq read its last run, take an allocation beyond).
pub type ToSave = SmallVec<[usize; MAX_SAVES]>;

/// The copy command buffers of a submission's saves, for the batch before the
/// application's.
pub type SaveCommands = SmallVec<[vk::CommandBuffer; MAX_SAVES]>;

/// A save of a last run could not be had (said once per process).
static SAID_UNSAVED: AtomicBool = AtomicBool::new(false);

fn say_unsaved(e: vk::Result) {
    if !SAID_UNSAVED.swap(true, Ordering::Relaxed) {
        log::warn!("the layer's copy of a resubmitted command buffer's last run could not be had ({e}); such runs are read on the host at the resubmission instead, which waits for the device's work in flight");
    }
}

impl DeviceTracer {
    /// The saves of the last runs of the traces at `to_save` among `traces`, for
    /// `submission` on `queue_ctx`: for each, the copy a wrapped run of it alone ends with
    /// (the queries copied into the readback, then reset), handed to the trace
    /// ([`RecordedTrace::save_prepared`]); their command buffers come back. Only on a
    /// device with host reset, where that is each wrapped run's own arming. A save that
    /// cannot be had (no memory) has that run read on the host instead.
    pub(super) fn saves(
        &self,
        queue_ctx: &Arc<QueueContext>,
        traces: &[Arc<RecordedTrace>],
        to_save: &ToSave,
        submission: u64,
    ) -> SaveCommands {
        let mut commands = SaveCommands::default();
        let arming = Arming {
            rearm: false,
            reset_after_copy: true,
        };
        for &at in to_save.as_slice() {
            let trace = &traces[at];
            let wrap = self.wrap(queue_ctx, std::slice::from_ref(trace), &[], arming);
            let copy_cb = match &wrap {
                Ok(RecordedWrap {
                    resources,
                    untimed: None,
                    ..
                }) => resources.used().last().map(|pair| pair.copy),
                _ => None,
            };
            match (wrap, copy_cb) {
                (Ok(wrap), Some(cb)) => {
                    let copy = SavedCopy::new(
                        self.backend.clone(),
                        Arc::clone(queue_ctx),
                        wrap.resources,
                        self.consumer.stopping(),
                    );
                    trace.save_prepared(submission, copy);
                    commands.push(cb);
                }
                (wrap, _) => {
                    // No readback (or no command buffer) could be had: nothing to save into.
                    let e = match wrap {
                        Ok(wrap) => {
                            self.backend.recycle(queue_ctx, wrap.resources);
                            wrap.untimed.unwrap_or(vk::Result::ERROR_UNKNOWN)
                        }
                        Err(e) => e,
                    };
                    say_unsaved(e);
                    trace.read_instead_of_saving(submission);
                }
            }
        }
        commands
    }
}
