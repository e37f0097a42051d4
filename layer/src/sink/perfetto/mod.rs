//! Perfetto: the `gpu.renderstages.utrace` data source (see docs/design.md).
//!
//! - [`render_stages`]: the sink turning a device's batches into `GpuRenderStageEvent`s,
//!   `VulkanApiEvent`s and clock snapshots, on the device's traceq thread (one sequence per
//!   device and session);
//! - [`sequence`]: what each sequence has interned and when it last sent a clock snapshot;
//!   [`sequence_start`]: what each is told of the device first (context, clock snapshots,
//!   object names);
//! - [`file_session`]: `GPU_TRACE_FORMAT=perfetto`: an in-process session written to
//!   `GPU_TRACEFILE` when the frame window closes, the last device goes or the process
//!   exits; [`trace_file`]: where its trace goes, the path touched (and held against other
//!   processes) only once a batch is traced; [`file_drain`]: the session's ring read into
//!   that file as it fills and every 100 ms;
//! - this file: the producer and the data source, registered once per process (Perfetto's
//!   global state cannot be torn down), whose start and stop open and close the capture
//!   gate of every device (through the [`SessionHooks`] the core gave); and the
//!   [`PerfettoLifecycle`] the core tells of its devices and frame window.

mod counter_tracks;
mod file_drain;
mod file_session;
pub mod render_stages;
mod sequence;
mod sequence_start;
mod stage_event;
mod stage_pairs;
mod stage_specs;
mod trace_file;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use perfetto_sdk::data_source::{
    DataSource, DataSourceArgsBuilder, DataSourceBufferExhaustedPolicy,
};
use perfetto_sdk::producer::{Backends, Producer, ProducerInitArgsBuilder};

use super::OutputChoice;
use crate::trace::sink_interface::Lifecycle;
use sequence::SequenceState;

/// The data source's name, as a trace config enables it.
pub const DATA_SOURCE_NAME: &str = "gpu.renderstages.utrace";

/// A batch was traced: an in-process session's file is claimed on the first one.
pub(crate) fn batch_traced() {
    file_session::batch_traced();
}

/// How long a stopping session waits for batches submitted before it stopped.
const STOP_DRAIN: Duration = Duration::from_secs(2);
/// Memory shared with the system tracing service, in KB (a hint the service may cap).
const SYSTEM_SHMEM_KB: u32 = 4096;

type RenderStages = DataSource<'static, SequenceState>;

static DATA_SOURCE: OnceLock<Option<RenderStages>> = OnceLock::new();

/// The registered data source (None if registration failed or never happened).
pub(crate) fn data_source() -> Option<&'static RenderStages> {
    DATA_SOURCE.get().and_then(Option::as_ref)
}

/// What the core does when a Perfetto session starts or stops, given with the device's
/// outputs, so that this output never calls into the core by name.
#[derive(Clone, Copy)]
pub struct SessionHooks {
    /// A session started: devices capture.
    pub started: fn(),
    /// The last session stopped: devices stop capturing.
    pub stopped: fn(),
    /// Waits, at most the given time per device, until every device wrote the batches it
    /// submitted so far.
    pub drain: fn(Duration),
}

/// Registers the data source once per process: with the in-process backend for
/// `GPU_TRACE_FORMAT=perfetto`, with the system backend (`traced`) on demand.
fn register(config: &OutputChoice, hooks: SessionHooks) -> Option<&'static RenderStages> {
    DATA_SOURCE
        .get_or_init(|| {
            // A batch of 10,000 traced draws is about 1 MB of packets: with the SDK's default
            // memory shared with the service, the traceq thread waits for the service to take
            // chunks for about half its time; with room for a whole such batch it writes
            // while the service copies (measured with the in-process service: 1.8 to 2.3 M
            // events/s). The in-process service keeps its default, though: with 4 MB, a
            // process killed while the service wrote its file left a torn last packet in
            // about one run in ten of tests/tests/killed.rs under load (never with the
            // default), and a file that decodes after any kill matters more there.
            let (backends, shmem_kb) = if config.on_demand {
                (Backends::SYSTEM, SYSTEM_SHMEM_KB)
            } else {
                (Backends::IN_PROCESS, 0)
            };
            let mut args = ProducerInitArgsBuilder::new().backends(backends);
            if shmem_kb > 0 {
                args = args.shmem_size_hint_kb(shmem_kb);
            }
            Producer::init(args.build());
            let args = DataSourceArgsBuilder::new()
                // When the shared memory with the service is full, the traceq thread waits
                // for room (it is not the application's thread; a large batch filled it in
                // bursts and lost a fifth of its stages when it dropped instead). Perfetto
                // drops only after stalling a few seconds, and marks the loss in the trace.
                .buffer_exhausted_policy(DataSourceBufferExhaustedPolicy::StallAndDrop)
                .handles_incremental_state_clear(true)
                .will_notify_on_stop(true)
                .on_start(move |instance, _| {
                    log::info!("Perfetto session {instance} started: capturing");
                    (hooks.started)();
                })
                .on_stop(move |instance, args| {
                    (hooks.stopped)();
                    // Batches submitted before the stop are still on their way: the stop
                    // completes once every device wrote them (never from this thread,
                    // which Perfetto needs to take their packets).
                    let guard = args.postpone();
                    let drained = std::thread::Builder::new()
                        .name("utrace-stop".into())
                        .spawn(move || {
                            (hooks.drain)(STOP_DRAIN);
                            log::info!("Perfetto session {instance} stopped");
                            drop(guard);
                        });
                    if drained.is_err() {
                        log::warn!("Perfetto session {instance} stopped before its last batches were written");
                    }
                })
                .build();
            let mut ds = RenderStages::new_with_incremental_state_type();
            match ds.register(DATA_SOURCE_NAME, args) {
                Ok(()) => {
                    log::info!(
                        "registered {DATA_SOURCE_NAME} with the {} backend",
                        if config.on_demand { "system" } else { "in-process" }
                    );
                    Some(ds)
                }
                Err(e) => {
                    log::error!("could not register {DATA_SOURCE_NAME} ({e}); no Perfetto output");
                    None
                }
            }
        })
        .as_ref()
}

/// The config of a session that records utrace's render stages into one ring buffer of
/// `buffer_kb` (the in-process session's, and the tests' consumer's).
pub fn session_config(buffer_kb: u32) -> Vec<u8> {
    file_session::trace_config(buffer_kb)
}

/// What the core tells Perfetto of one device: the file session starts with the first
/// device (unless a frame window starts it later), follows the `GPU_TRACE_FRAMES` window,
/// and ends with the last device. On demand (a system session) only the registration is
/// done here.
pub struct PerfettoLifecycle {
    config: Arc<OutputChoice>,
    hooks: SessionHooks,
}

impl PerfettoLifecycle {
    pub fn new(config: Arc<OutputChoice>, hooks: SessionHooks) -> PerfettoLifecycle {
        PerfettoLifecycle { config, hooks }
    }
}

impl Lifecycle for PerfettoLifecycle {
    fn device_created(&self) {
        let config = &self.config;
        if register(config, self.hooks).is_some() && !config.on_demand {
            let start_now = config.frames.is_none_or(|(first, _)| first == 0);
            file_session::device_added(config, self.hooks, start_now);
        }
    }

    /// The file session starts; it is the window.
    fn window_opened(&self) {
        if !self.config.on_demand {
            file_session::start();
        }
    }

    /// The file session stops (once every batch submitted in the window is written) and
    /// its trace is written.
    fn window_closed(&self) {
        if !self.config.on_demand {
            file_session::finish();
        }
    }

    /// The last device gone ends the file session.
    fn device_gone(&self) {
        file_session::device_removed();
    }
}
