//! The per-device trace context (u_trace_context): the chunk pool, the command buffers' and
//! queues' state, the frame and submission counters, and the traceq consumer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ash::vk;
use parking_lot::Mutex;

use super::capture_gates::Capture;
use super::device_life::DeviceLife;
use super::health::Health;
use super::object_names::KeptNames;
use super::objects::Objects;
use super::options::TracerOptions;
use super::record::chunk::ChunkPool;
use super::record::cmdbufs::CommandBuffers;
use super::record::command_pools::PoolRecord;
use super::sink_interface::{DeviceContext, ObjectNames, Outputs};
use super::submit::batch::SpareLists;
use super::submit::queues::Queues;
use crate::gpu::interface::{Backend, CompletionMode, MeasuredPair, QueueContext};
use crate::trace::traceq::{self, Message, Stats, TraceqHandle};

pub struct DeviceTracer {
    /// Creation order of the device in this process (`%i` in `GPU_TRACEFILE`).
    pub index: u32,
    /// The device's Vulkan: the only way the core reaches it.
    pub(super) backend: Backend,
    pub(super) chunks: Arc<ChunkPool>,
    /// The application's render passes and images, for tracepoint arguments.
    pub objects: Objects,
    /// Cleared by an internal error, shared with the chunk pool.
    pub(super) health: Arc<Health>,
    /// Whether the trace is being written (`GPU_TRACE_FRAMES`, tracing sessions).
    pub capture: Capture,
    pub(super) cmdbufs: CommandBuffers,
    pub(super) pools: Mutex<HashMap<u64, PoolRecord>>,
    /// The application's queues and the layer's resources for each.
    pub(super) queues: Queues,
    pub(super) frame: AtomicU32,
    pub(super) submissions: AtomicU64,
    pub(super) consumer: TraceqHandle,
    /// Batch lists for reuse.
    pub(super) spare: Arc<SpareLists>,
    pub stats: Arc<Stats>,
    /// What its outputs are told of the device's life and of the frame window.
    life: DeviceLife,
    /// Its outputs show how long each submit call took (Perfetto's `vk_queue_submit`): only
    /// then does a submission read the clock a second time, after the call.
    pub(super) submit_durations_timed: bool,
    /// Where the measured GPU clock pairing goes (devices without calibrated timestamps).
    measured_clock: Option<Arc<OnceLock<MeasuredPair>>>,
    /// Names the application gave objects (kept for Perfetto).
    names: KeptNames,
}

impl DeviceTracer {
    pub fn new(
        index: u32,
        backend: Backend,
        options: TracerOptions,
        outputs: Outputs,
    ) -> Result<DeviceTracer, String> {
        let stats = Arc::new(Stats::default());
        let Outputs { open, lifecycle } = outputs;
        let life = DeviceLife::created(lifecycle);
        // Perfetto places GPU stages on the CPU's timeline; the text formats place each
        // batch's submit time on the GPU's.
        let (clock, measured_clock) = backend.gpu_clock();
        let names = ObjectNames::default();
        let sink = open(DeviceContext {
            index,
            handle: backend.device_handle(),
            clock,
            names: Arc::clone(&names),
        });
        let start = {
            let (backend, stats) = (backend.clone(), Arc::clone(&stats));
            let names = Arc::clone(&names);
            move || traceq::spawn(index, backend, sink, stats, names)
        };
        // On demand, the thread waits for the first batch a session captures.
        let consumer = if options.on_demand {
            TraceqHandle::lazy(start)
        } else {
            TraceqHandle::started(
                start().map_err(|e| format!("could not start the traceq thread: {e}"))?,
            )
        };
        log::info!(
            "tracing device {index} ({}), completion by {}, queries reset {}",
            backend.caps().device_name,
            match backend.mode() {
                CompletionMode::Timeline => "timeline semaphore",
                CompletionMode::Fence => "fence",
            },
            if backend.host_reset() {
                "on the host"
            } else {
                "on the GPU"
            }
        );
        let health = Arc::new(Health::new(index));
        // Decides how submissions are stamped (a file read) before the first one.
        crate::gpu::interface::cpu_ticks::ticks();
        Ok(DeviceTracer {
            index,
            chunks: Arc::new(ChunkPool::new(backend.clone(), Arc::clone(&health))),
            objects: Objects::new(Arc::clone(&names)),
            backend,
            health,
            capture: Capture::new(options.frames, options.instrument, options.perfetto),
            life,
            submit_durations_timed: options.perfetto,
            measured_clock,
            names: KeptNames::new(names, options.perfetto),
            cmdbufs: CommandBuffers::default(),
            pools: Mutex::new(HashMap::new()),
            queues: Queues::default(),
            frame: AtomicU32::new(0),
            submissions: AtomicU64::new(0),
            consumer,
            spare: Arc::default(),
            stats,
        })
    }

    /// An internal error: new command buffers are no longer instrumented (those already
    /// instrumented keep being re-armed so that they stay valid), logged once.
    pub fn fault(&self, what: &str, error: vk::Result) {
        self.health.fault(what, error);
    }

    /// Runs the layer's own part of `what` on this device. A panic stops tracing the device
    /// (no new command buffer is instrumented; the first is logged) and comes back as
    /// `None`: the caller then behaves as if tracing were off for this call.
    #[inline]
    pub fn guarded<R>(&self, what: &str, f: impl FnOnce() -> R) -> Option<R> {
        match crate::guard::catch(what, f) {
            Ok(r) => Some(r),
            Err(message) => {
                self.health.internal_error(what, &message);
                None
            }
        }
    }

    /// A queue the application got (`vkGetDeviceQueue*`).
    pub fn register_queue(&self, queue: vk::Queue, family: u32, index: u32) {
        if queue == vk::Queue::null() || !self.backend.caps().family_traceable(family) {
            return;
        }
        if self.queues.register(queue, family, index) {
            self.measure_clock(queue, family);
        }
    }

    /// The layer's resources for `queue`, made at its first traced submission.
    pub(super) fn queue_context(&self, queue: vk::Queue) -> Option<Arc<QueueContext>> {
        let made = self.queues.context(queue, |family, index| {
            self.backend.queue_context(queue, family, index)
        })?;
        match made {
            Ok(ctx) => Some(ctx),
            Err(e) => {
                self.fault("setting up a queue", e);
                None
            }
        }
    }

    /// Measures the GPU clock against the CPU's on the first queue the application gets,
    /// before it can use it, when the device has no calibrated timestamps.
    fn measure_clock(&self, queue: vk::Queue, family: u32) {
        let Some(slot) = self.measured_clock.as_ref() else {
            return;
        };
        if slot.get().is_some() {
            return;
        }
        match self.backend.measure_clock(queue, family) {
            Ok(measured) => {
                log::info!(
                    "device {}: GPU clock measured against CLOCK_BOOTTIME to within {} ns ({})",
                    self.index,
                    measured.within_ns,
                    measured.rounds.name()
                );
                let _ = slot.set(measured);
            }
            Err(e) => log::warn!(
                "device {}: the GPU clock could not be measured ({e}); Perfetto cannot place its events and text traces give no submit times",
                self.index
            ),
        }
    }

    /// After `vkQueuePresentKHR`: the current frame ends.
    pub fn end_frame(&self) {
        let frame = self.frame.fetch_add(1, Ordering::Relaxed);
        let end = self.capture.end_frame(frame);
        if end.captured {
            self.consumer.send(Message::EndOfFrame(frame));
        }
        self.life.frame_ended(self.index, frame, &end);
    }

    /// The application named an object: formats that show names get it in order with the
    /// batches (Perfetto shows stages under the names of their command buffers and passes).
    pub fn object_named(&self, device: u64, object_type: i32, object: u64, name: &str) {
        self.names
            .named(self.index, device, object_type, object, name);
    }

    /// Waits (bounded) until the traceq thread has written everything sent before: a
    /// Perfetto session's stop, on Perfetto's thread. Never on an application's call.
    pub fn sync(&self, timeout: Duration) {
        self.consumer.sync(timeout);
    }

    /// Stops the traceq thread after it wrote every batch already submitted, then (unless
    /// the process is exiting) destroys the layer's objects. Call before the device goes.
    pub fn shutdown(&self, exiting: bool) {
        let frames = self.frame.load(Ordering::Relaxed);
        if let Some((first, last)) = self.capture.window_missed(frames) {
            log::warn!(
                "device {}: GPU_TRACE_FRAMES={first}-{last} never began: the device ended after {frames} frame(s) (a frame ends at vkQueuePresentKHR); nothing of the window was traced",
                self.index
            );
        }
        let stopped = self.consumer.stop(exiting);
        self.life.gone();
        if exiting || !stopped {
            // Objects may still be in use (exit), or the thread still runs: leave them.
            return;
        }
        self.queues.destroy(|ctx| self.backend.destroy_queue(ctx));
        self.cmdbufs.clear();
        self.chunks.destroy_all();
    }
}
