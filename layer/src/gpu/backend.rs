//! One device's Vulkan, as the trace core uses it (u_trace's callbacks, in Rust): the next
//! layer's functions, what the device can time, how batches complete, and the operations
//! the core asks for: write a timestamp, take and give back query chunks, wrap a
//! submission, wait for a batch, read its timestamps, pair the clocks.

use std::sync::{Arc, OnceLock};

use ash::vk;
use ash::vk::Handle;

use super::batch_resources::{BatchResources, RecordedWrap};
use super::calibration::{GpuClock, MeasuredPair};
use super::caps::DeviceCaps;
use super::completion::{self, Completion, CompletionMode, WaitOutcome};
use super::device_time::DeviceTime;
use super::features::DevicePlan;
use super::layer_commands::SetLoaderData;
use super::query_pool;
use super::queue_context::QueueContext;
use super::readback::Readback;
use super::run_slots::RunSlots;
use super::segments::{Arming, Segment};
use super::submission::Submission;
use super::timestamps::cmd_write_timestamp;
use super::wrapped_submit::Wrapping;
use crate::loader::dispatch::DeviceDispatch;

/// A traced device's Vulkan. Cloned (three `Arc`s) when the device is set up, by the chunk
/// pool and the traceq thread, and for each save of a last run (`trace::record::saved_copy`,
/// on a device whose reads wait, off the common path).
#[derive(Clone)]
pub struct Backend {
    dispatch: Arc<DeviceDispatch>,
    caps: Arc<DeviceCaps>,
    /// The device's timestamps as continuous nanoseconds (counters that wrap unwrapped).
    time: Arc<DeviceTime>,
    mode: CompletionMode,
    /// Query chunks are reset on the host (see [`Self::host_reset`]).
    host_reset: bool,
    /// `VK_KHR/EXT_calibrated_timestamps` is enabled.
    calibrated: bool,
    set_loader_data: Option<SetLoaderData>,
    /// The slots tracked command buffers copy their runs into (see `run_slots`).
    pub(super) run_slots: Arc<RunSlots>,
    /// Pipeline statistics queries may be made (GPU counters asked for, the device has
    /// them, and their pools are reset on the host; see `statistics_queries`).
    pub(super) statistics: bool,
    /// They count task and mesh shader invocations too (`meshShaderQueries`).
    pub(super) mesh_statistics: bool,
    /// One may be active across `vkCmdExecuteCommands` (`inheritedQueries` enabled).
    pub(super) inherited_statistics: bool,
    /// Hardware counters may be collected (chosen, the profiling lock held, their pools
    /// reset on the host).
    pub(super) hardware: Option<Arc<super::hardware_plan::HardwarePlan>>,
}

/// Where a tracepoint's timestamp is written from: the device's functions, borrowed (the
/// same single reference the recording side held before there was a backend).
#[derive(Clone, Copy)]
pub struct Timestamps<'a>(&'a DeviceDispatch);

impl Timestamps<'_> {
    /// Writes a timestamp into query `query` of `pool`: after the work before it (an end,
    /// `end_of_pipe`) or as the work after it starts.
    ///
    /// # Safety
    /// `cmd` is recording, and every batch that runs it re-arms the query first.
    #[inline(always)]
    pub unsafe fn write(
        self,
        cmd: vk::CommandBuffer,
        end_of_pipe: bool,
        pool: vk::QueryPool,
        query: u32,
    ) {
        // SAFETY: the caller's promise.
        unsafe { cmd_write_timestamp(self.0, cmd, end_of_pipe, pool, query) };
    }
}

impl Backend {
    /// The backend of a device the layer can trace, or why it cannot. The completion mode
    /// falls back to fences where the next layer lacks the timeline waits; host resets serve
    /// one-time command buffers whose batches complete through the timeline (see
    /// `trace::submit::pending_submission`).
    pub fn new(
        dispatch: Arc<DeviceDispatch>,
        caps: DeviceCaps,
        plan: &DevicePlan,
        set_loader_data: Option<SetLoaderData>,
    ) -> Result<Backend, String> {
        if !dispatch.missing.is_empty() {
            return Err(format!("the driver lacks {:?}", dispatch.missing));
        }
        let mode = match plan.mode {
            CompletionMode::Timeline
                if dispatch.wait_semaphores.is_none()
                    || dispatch.get_semaphore_counter_value.is_none() =>
            {
                CompletionMode::Fence
            }
            mode => mode,
        };
        let host_reset = plan.host_reset
            && mode == CompletionMode::Timeline
            && dispatch.reset_query_pool.is_some();
        Ok(Backend {
            dispatch,
            time: Arc::new(DeviceTime::new(&caps)),
            caps: Arc::new(caps),
            mode,
            host_reset,
            calibrated: plan.calibrated,
            set_loader_data,
            run_slots: Arc::default(),
            statistics: plan.statistics.query && host_reset,
            mesh_statistics: plan.statistics.mesh == super::mesh_statistics::MeshQueries::Counted,
            inherited_statistics: plan.statistics.inherited && !plan.statistics.uncopied,
            hardware: host_reset
                .then(|| super::hardware_plan::HardwarePlan::of(&plan.perf))
                .flatten()
                .map(Arc::new),
        })
    }

    /// The device's functions, for the backend's other parts (`statistics_queries`).
    pub(super) fn dispatch(&self) -> &DeviceDispatch {
        &self.dispatch
    }

    /// The device's handle, as a number.
    pub fn device_handle(&self) -> u64 {
        self.dispatch.handle.as_raw()
    }

    pub fn caps(&self) -> &DeviceCaps {
        &self.caps
    }

    /// The device's timestamps in continuous nanoseconds, per queue family.
    pub fn time(&self) -> &DeviceTime {
        &self.time
    }

    pub fn mode(&self) -> CompletionMode {
        self.mode
    }

    /// Whether query chunks are reset on the host (`vkResetQueryPool`) rather than re-armed
    /// on the GPU.
    pub fn host_reset(&self) -> bool {
        self.host_reset
    }

    /// Whether reading queries on the host waits for all the device's work, not only the
    /// queries' (Lavapipe's `vkGetQueryPoolResults` waits for the device to go idle): what
    /// a CPU device does, whose "GPU" is the CPU's threads.
    pub fn query_reads_wait(&self) -> bool {
        self.caps.device_type == vk::PhysicalDeviceType::CPU
    }

    /// Where the recording side writes timestamps from.
    #[inline(always)]
    pub fn timestamps(&self) -> Timestamps<'_> {
        Timestamps(&self.dispatch)
    }

    /// A new query chunk (a timestamp query pool) of `size` queries.
    pub fn create_query_chunk(&self, size: u32) -> Result<vk::QueryPool, vk::Result> {
        query_pool::create(&self.dispatch, size)
    }

    /// Resets the first `count` queries of a chunk on the host.
    ///
    /// # Safety
    /// `hostQueryReset` is enabled, no pending work uses the pool, and it holds `count`
    /// queries at least.
    pub unsafe fn reset_queries(&self, pool: vk::QueryPool, count: u32) {
        // SAFETY: the caller's promise.
        unsafe { query_pool::reset_range_on_host(&self.dispatch, pool, count) };
    }

    /// Destroys a query chunk no pending work uses (device teardown).
    pub fn destroy_query_chunk(&self, pool: vk::QueryPool) {
        query_pool::destroy(&self.dispatch, pool);
    }

    /// Reads `out.len()` timestamps of `pool` from `first` on, written by completed work.
    pub fn read_queries(
        &self,
        pool: vk::QueryPool,
        first: u32,
        out: &mut [u64],
    ) -> Result<(), vk::Result> {
        query_pool::read(&self.dispatch, pool, first, out)
    }

    /// The first `count` timestamps a completed batch copied into `readback`.
    pub fn read_copied<'r>(&self, readback: &'r Readback, count: u32) -> &'r [u64] {
        readback.read(&self.dispatch, count)
    }

    /// Waits for a batch at most `timeout_ns`.
    pub fn wait(&self, completion: &Completion, timeout_ns: u64) -> WaitOutcome {
        completion::wait(&self.dispatch, completion, timeout_ns)
    }

    /// The layer's resources for a queue (family, index).
    pub fn queue_context(
        &self,
        queue: vk::Queue,
        family: u32,
        index: u32,
    ) -> Result<QueueContext, vk::Result> {
        QueueContext::new(&self.dispatch, queue, family, index, self.mode)
    }

    /// The layer's command buffers around a submission on `queue` (see
    /// [`QueueContext::prepare`]).
    pub fn prepare_wrap(
        &self,
        queue: &QueueContext,
        segments: &[Segment<'_>],
        total_and_arming: (u32, Arming),
        fingerprint: u64,
        recording: u64,
    ) -> Result<RecordedWrap, vk::Result> {
        queue.prepare(
            &self.dispatch,
            self.set_loader_data,
            &self.caps.memory,
            segments,
            total_and_arming,
            fingerprint,
            recording,
        )
    }

    /// The layer's command buffers kept for a resubmission of one recording alone (see
    /// [`QueueContext::rerun`]).
    pub fn rerun_wrap(
        &self,
        queue: &QueueContext,
        recording: u64,
        fingerprint: u64,
        arming: Arming,
    ) -> Option<RecordedWrap> {
        queue.rerun(recording, fingerprint, arming)
    }

    /// The application's batches submitted between the layer's (see
    /// [`Submission::wrapped`]).
    ///
    /// # Safety
    /// The application's arguments, valid for the command on this device's `queue`.
    #[inline]
    pub unsafe fn submit_wrapped<S: Submission>(
        &self,
        next: S::Next,
        queue: vk::Queue,
        submits: &[S],
        fence: vk::Fence,
        wrap: &Wrapping<'_>,
    ) -> vk::Result {
        // SAFETY: the caller's promise.
        unsafe { S::wrapped(&self.dispatch, next, queue, submits, fence, wrap) }
    }

    /// Gives a batch's resources back to its queue once it completed (or was not submitted).
    pub fn recycle(&self, queue: &QueueContext, resources: BatchResources) {
        queue.recycle(&self.dispatch, resources);
    }

    /// Signals, from the host, the batches of `queue` left waiting for a later signal.
    pub fn signal_deferred(&self, queue: &QueueContext) {
        queue.signal_deferred(&self.dispatch);
    }

    /// Destroys a queue's resources (device teardown).
    pub fn destroy_queue(&self, queue: &QueueContext) {
        queue.destroy(&self.dispatch);
    }

    /// The device's clock pairing for Perfetto: calibrated where the extension was enabled,
    /// else measured when the application first gets a queue (the slot returned).
    pub fn gpu_clock(&self) -> (Option<GpuClock>, Option<Arc<OnceLock<MeasuredPair>>>) {
        let caps = &self.caps;
        let Some(family) = (0..caps.families.len() as u32).find(|f| caps.family_traceable(*f))
        else {
            return (None, None);
        };
        if self.calibrated {
            if let Some(clock) =
                GpuClock::calibrated(Arc::clone(&self.dispatch), Arc::clone(&self.time), family)
            {
                return (Some(clock), None);
            }
        }
        let slot = Arc::new(OnceLock::new());
        (Some(GpuClock::Measured(Arc::clone(&slot))), Some(slot))
    }

    /// Measures the GPU clock against the CPU's on `queue` (see
    /// [`super::measured_clock::measure`]).
    pub fn measure_clock(&self, queue: vk::Queue, family: u32) -> Result<MeasuredPair, vk::Result> {
        let measured = super::measured_clock::measure(
            &self.dispatch,
            self.set_loader_data,
            queue,
            family,
            self.caps.timestamp_mask(family),
            self.caps.timestamp_period,
        );
        if let Ok(measured) = &measured {
            // Later timestamps are unwrapped from the pair's.
            self.time.family(family).seed_ns(measured.pair.gpu_ns);
        }
        measured
    }
}

#[cfg(test)]
impl Backend {
    /// A device without any function and without queues: enough for traces that never
    /// call Vulkan.
    pub fn inert() -> Backend {
        unsafe extern "system" fn no_functions(
            _device: vk::Device,
            _name: *const std::ffi::c_char,
        ) -> vk::PFN_vkVoidFunction {
            None
        }
        // SAFETY: the stand-in GDPA resolves nothing; no function is ever called.
        let dispatch = unsafe { DeviceDispatch::load(no_functions, vk::Device::null()) };
        let caps = DeviceCaps {
            timestamp_period: 1.0,
            families: Vec::new(),
            memory: vk::PhysicalDeviceMemoryProperties::default(),
            api_version: 0,
            device_type: vk::PhysicalDeviceType::OTHER,
            device_name: String::new(),
            vendor_id: 0,
            device_id: 0,
            driver_version: 0,
            driver_name: String::new(),
            driver_info: String::new(),
        };
        Backend {
            dispatch: Arc::new(dispatch),
            time: Arc::new(DeviceTime::new(&caps)),
            caps: Arc::new(caps),
            mode: CompletionMode::Fence,
            host_reset: false,
            calibrated: false,
            set_loader_data: None,
            run_slots: Arc::default(),
            statistics: false,
            mesh_statistics: false,
            inherited_statistics: false,
            hardware: None,
        }
    }
}
