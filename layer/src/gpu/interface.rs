//! What the trace core takes from `gpu`, in one place: the device's [`Backend`] (its
//! operations) and the plain types that travel with batches through the core.

pub use super::backend::{Backend, Timestamps};
pub use super::batch_lists::MAX_SAVES;
pub use super::batch_resources::{BatchResources, RecordedWrap};
pub use super::calibration::{ClockPair, GpuClock, MeasuredPair};
pub use super::caps::{ticks_to_ns, DeviceCaps};
pub use super::completion::{Completion, CompletionMode, WaitOutcome};
pub use super::cpu_clock;
pub use super::cpu_ticks;
pub use super::device_time::{DeviceTime, FamilyTime};
pub use super::query_pool::{next_chunk_class, CHUNK_QUERIES, CHUNK_SIZES};
pub use super::queue_context::QueueContext;
pub use super::recipe::fingerprint as wrap_fingerprint;
pub use super::run_slots::{RunSlot, SLOT_VALUES};
pub use super::segments::{Arming, CopyRange, QueryRange, Segment};
pub use super::submission::Submission;
pub use super::submission_counts::RunWaits;
pub use super::wrapped_submit::Wrapping;
