//! Perfetto: the `gpu.renderstages.utrace` data source (decision 7 of DESIGN).
//!
//! - [`render_stages`]: the sink turning a device's batches into `GpuRenderStageEvent`s,
//!   `VulkanApiEvent`s and clock snapshots, on the device's traceq thread (one sequence per
//!   device and session);
//! - [`sequence`]: what each sequence has interned and when it last sent a clock snapshot;
//! - [`file_session`]: `GPU_TRACE_FORMAT=perfetto`: an in-process session written to
//!   `GPU_TRACEFILE` when the frame window closes, the last device goes or the process
//!   exits;
//! - this file: the producer and the data source, registered once per process (Perfetto's
//!   global state cannot be torn down), whose start and stop open and close the capture
//!   gate of every device ([`crate::trace::capture::session_started`]).

mod file_session;
pub mod render_stages;
mod sequence;
mod stage_event;
mod stage_pairs;

use std::sync::OnceLock;
use std::time::Duration;

use perfetto_sdk::data_source::{
    DataSource, DataSourceArgsBuilder, DataSourceBufferExhaustedPolicy,
};
use perfetto_sdk::producer::{Backends, Producer, ProducerInitArgsBuilder};

use crate::config::Config;
use sequence::SequenceState;

/// The data source's name, as a trace config enables it.
pub const DATA_SOURCE_NAME: &str = "gpu.renderstages.utrace";

/// How long a stopping session waits for batches submitted before it stopped.
const STOP_DRAIN: Duration = Duration::from_secs(2);
/// Memory shared with the tracing service, in KB (a hint the service may cap).
const SHMEM_KB: u32 = 4096;

type RenderStages = DataSource<'static, SequenceState>;

static DATA_SOURCE: OnceLock<Option<RenderStages>> = OnceLock::new();

/// The registered data source (None if registration failed or never happened).
pub(crate) fn data_source() -> Option<&'static RenderStages> {
    DATA_SOURCE.get().and_then(Option::as_ref)
}

/// Registers the data source once per process: with the in-process backend for
/// `GPU_TRACE_FORMAT=perfetto`, with the system backend (`traced`) on demand.
fn register(config: &Config) -> Option<&'static RenderStages> {
    DATA_SOURCE
        .get_or_init(|| {
            let backends = if config.on_demand {
                Backends::SYSTEM
            } else {
                Backends::IN_PROCESS
            };
            // A batch of 10,000 traced draws is about 1 MB of packets: with the SDK's default
            // memory shared with the service (256 KB), the traceq thread waited for the
            // service to take chunks for half its time; with room for a whole such batch it
            // writes while the service copies (measured: 1.8 to ~3.5 M events/s).
            Producer::init(
                ProducerInitArgsBuilder::new()
                    .backends(backends)
                    .shmem_size_hint_kb(SHMEM_KB)
                    .build(),
            );
            let args = DataSourceArgsBuilder::new()
                // When the shared memory with the service is full, the traceq thread waits
                // for room (it is not the application's thread; a large batch filled it in
                // bursts and lost a fifth of its stages when it dropped instead). Perfetto
                // drops only after stalling a few seconds, and marks the loss in the trace.
                .buffer_exhausted_policy(DataSourceBufferExhaustedPolicy::StallAndDrop)
                .handles_incremental_state_clear(true)
                .will_notify_on_stop(true)
                .on_start(|instance, _| {
                    log::info!("Perfetto session {instance} started: capturing");
                    crate::trace::capture::session_started();
                })
                .on_stop(|instance, args| {
                    crate::trace::capture::session_stopped();
                    // Batches submitted before the stop are still on their way: the stop
                    // completes once every device wrote them (never from this thread,
                    // which Perfetto needs to take their packets).
                    let guard = args.postpone();
                    let drained = std::thread::Builder::new()
                        .name("utrace-stop".into())
                        .spawn(move || {
                            for device in crate::loader::registry::all_devices() {
                                if let Some(tracer) = device.tracer.as_ref() {
                                    tracer.sync(STOP_DRAIN);
                                }
                            }
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
    file_session::trace_config(buffer_kb, None)
}

/// A device that feeds Perfetto was created. The file session starts with it, unless a
/// frame window starts later (then [`window_opened`] starts it).
pub fn device_created(config: &Config) {
    if register(config).is_some() && !config.on_demand {
        let start_now = config.frames.is_none_or(|(first, _)| first == 0);
        file_session::device_added(config, start_now);
    }
}

/// The `GPU_TRACE_FRAMES` window opened: the file session starts.
pub fn window_opened() {
    file_session::start();
}

/// The window closed: the file session stops (once every batch submitted in it is
/// written) and its trace is written.
pub fn window_closed() {
    file_session::finish();
}

/// A device that feeds Perfetto is gone and wrote everything it had.
pub fn device_destroyed() {
    file_session::device_removed();
}
