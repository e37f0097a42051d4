//! The GPU clock measured against the CPU's where the device cannot sample both at once
//! (no calibrated timestamps, or `UTRACE_FORCE_MEASURED_CLOCK=1`): a command buffer that
//! writes one timestamp at the top of the pipe is submitted a few times, the CPU clock read
//! just before the submit and just after its fence signalled. The timestamp was written
//! between the two reads, so the midpoint pairs with it to within half the round trip; the
//! tightest of the rounds is kept. It runs once, when the application first gets a queue
//! (inside `vkGetDeviceQueue*`, before the application can use that queue).

use ash::vk;
use ash::vk::Handle;

use super::calibration::ClockPair;
use super::caps::ticks_to_ns;
use super::check;
use super::cpu_clock;
use super::queue_context::{loader_object, SetLoaderData};
use crate::loader::dispatch::DeviceDispatch;

const ROUNDS: usize = 5;
/// A round that takes longer is not waited for further.
const ROUND_TIMEOUT_NS: u64 = 1_000_000_000;

/// The pair, and the measurement's uncertainty (half the tightest round trip) in ns.
pub fn measure(
    d: &DeviceDispatch,
    set_loader_data: Option<SetLoaderData>,
    queue: vk::Queue,
    family: u32,
    mask: u64,
    period: f32,
) -> Result<(ClockPair, u64), vk::Result> {
    // SAFETY: the next layer's GDPA on the live device.
    let has_results =
        unsafe { (d.get_device_proc_addr)(d.handle, c"vkGetQueryPoolResults".as_ptr()).is_some() };
    if !has_results {
        return Err(vk::Result::ERROR_EXTENSION_NOT_PRESENT);
    }
    if let Some(set) = set_loader_data {
        // The loader gives the queue its dispatch pointer only after vkGetDeviceQueue
        // returns; the layers beneath find their state by it, so it is set now (to the
        // value the loader will write again).
        // SAFETY: the loader's callback for a dispatchable object of this device.
        check(unsafe { set(d.handle, queue.as_raw() as usize as *mut std::ffi::c_void) })?;
    }
    let mut objects = Objects::default();
    let result = objects.measure(d, set_loader_data, queue, family, mask, period);
    objects.destroy(d);
    result
}

/// What the measurement creates, destroyed whatever happens.
#[derive(Default)]
struct Objects {
    query_pool: vk::QueryPool,
    command_pool: vk::CommandPool,
    fence: vk::Fence,
    /// A submit has not been waited for: the objects may still be in use.
    in_flight: bool,
}

impl Objects {
    fn measure(
        &mut self,
        d: &DeviceDispatch,
        set_loader_data: Option<SetLoaderData>,
        queue: vk::Queue,
        family: u32,
        mask: u64,
        period: f32,
    ) -> Result<(ClockPair, u64), vk::Result> {
        let fp = &d.fp_v1_0;
        let query_info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(1);
        let pool_info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
        let fence_info = vk::FenceCreateInfo::default();
        let mut cb = vk::CommandBuffer::null();
        // SAFETY: valid create infos on a live device; each object is recorded in `self`
        // as soon as it exists so that `destroy` frees it.
        unsafe {
            check((fp.create_query_pool)(
                d.handle,
                &query_info,
                std::ptr::null(),
                &mut self.query_pool,
            ))?;
            check((fp.create_command_pool)(
                d.handle,
                &pool_info,
                std::ptr::null(),
                &mut self.command_pool,
            ))?;
            check((fp.create_fence)(
                d.handle,
                &fence_info,
                std::ptr::null(),
                &mut self.fence,
            ))?;
            let alloc = vk::CommandBufferAllocateInfo::default()
                .command_pool(self.command_pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            check((fp.allocate_command_buffers)(d.handle, &alloc, &mut cb))?;
            if let Some(set) = set_loader_data {
                // The loader has not seen this dispatchable object: give it its pointer.
                check(set(d.handle, loader_object(cb)))?;
            }
            check((fp.begin_command_buffer)(
                cb,
                &vk::CommandBufferBeginInfo::default(),
            ))?;
            (fp.cmd_reset_query_pool)(cb, self.query_pool, 0, 1);
            (fp.cmd_write_timestamp)(cb, vk::PipelineStageFlags::TOP_OF_PIPE, self.query_pool, 0);
            check((fp.end_command_buffer)(cb))?;
        }
        let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cb));
        let mut best: Option<(ClockPair, u64)> = None;
        for _ in 0..ROUNDS {
            let mut ticks = 0u64;
            // SAFETY: the application cannot use `queue` yet (this runs inside the call
            // that hands it out); the fence is unsignalled before each submit and waited
            // for with a timeout; the query was written once the fence signalled.
            let (before, after) = unsafe {
                check((fp.reset_fences)(d.handle, 1, &self.fence))?;
                let before = cpu_clock::boottime_ns();
                check((fp.queue_submit)(queue, 1, &submit, self.fence))?;
                self.in_flight = true;
                check((fp.wait_for_fences)(
                    d.handle,
                    1,
                    &self.fence,
                    vk::TRUE,
                    ROUND_TIMEOUT_NS,
                ))?;
                self.in_flight = false;
                let after = cpu_clock::boottime_ns();
                check((fp.get_query_pool_results)(
                    d.handle,
                    self.query_pool,
                    0,
                    1,
                    std::mem::size_of::<u64>(),
                    (&mut ticks as *mut u64).cast(),
                    std::mem::size_of::<u64>() as u64,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                ))?;
                (before, after)
            };
            let half = (after - before) / 2;
            if best.is_none_or(|(_, h)| half < h) {
                best = Some((
                    ClockPair {
                        gpu_ns: ticks_to_ns(ticks & mask, period),
                        boottime_ns: before + half,
                    },
                    half,
                ));
            }
        }
        best.ok_or(vk::Result::ERROR_UNKNOWN)
    }

    fn destroy(&self, d: &DeviceDispatch) {
        let fp = &d.fp_v1_0;
        if self.in_flight {
            // SAFETY: the fence of the last submit, on the live device.
            let r = unsafe {
                (fp.wait_for_fences)(d.handle, 1, &self.fence, vk::TRUE, ROUND_TIMEOUT_NS)
            };
            if r != vk::Result::SUCCESS {
                // Still in use (or the device is lost): leaked rather than freed under the GPU.
                return;
            }
        }
        // SAFETY: the objects are idle and null handles are ignored by the destroy
        // commands; the command buffer goes with its pool.
        unsafe {
            (fp.destroy_fence)(d.handle, self.fence, std::ptr::null());
            (fp.destroy_command_pool)(d.handle, self.command_pool, std::ptr::null());
            (fp.destroy_query_pool)(d.handle, self.query_pool, std::ptr::null());
        }
    }
}
