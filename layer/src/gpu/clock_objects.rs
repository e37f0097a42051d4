//! What the clock measurement ([`super::measured_clock`]) submits: one timestamp query,
//! a fence, and two command buffers recorded once and submitted round after round:
//! - *fenced*: resets the query and writes the timestamp;
//! - *gated*: resets the query, sets `started`, waits for `go` (set by the host), writes the
//!   timestamp, then sets `done` once the timestamp is written. Host-set events may be
//!   waited on outside a render pass; `srcStageMask` is `HOST` as the spec requires.
//!
//! Everything is destroyed whatever happens, unless a submission could not be waited for
//! (it is then leaked rather than freed under the GPU).

use ash::vk;

use super::check;
use super::layer_commands::{loader_object, SetLoaderData};
use crate::loader::dispatch::DeviceDispatch;

/// Longest wait for a submission before its objects are given up.
pub const SUBMIT_TIMEOUT_NS: u64 = 1_000_000_000;

#[derive(Default)]
pub struct ClockObjects {
    pub query_pool: vk::QueryPool,
    command_pool: vk::CommandPool,
    pub fence: vk::Fence,
    pub fenced: vk::CommandBuffer,
    /// Null when the events could not be made: only fenced rounds are possible.
    pub gated: vk::CommandBuffer,
    pub started: vk::Event,
    pub go: vk::Event,
    pub done: vk::Event,
    /// A submission has not been waited for: the objects may still be in use.
    pub in_flight: bool,
}

impl ClockObjects {
    /// Creates the objects and records both command buffers (the gated one only if its
    /// events can be made).
    pub fn create(
        &mut self,
        d: &DeviceDispatch,
        set_loader_data: Option<SetLoaderData>,
        family: u32,
    ) -> Result<(), vk::Result> {
        let fp = &d.fp_v1_0;
        let query_info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(1);
        let pool_info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
        let fence_info = vk::FenceCreateInfo::default();
        let mut cbs = [vk::CommandBuffer::null(); 2];
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
                .command_buffer_count(2);
            check((fp.allocate_command_buffers)(
                d.handle,
                &alloc,
                cbs.as_mut_ptr(),
            ))?;
            if let Some(set) = set_loader_data {
                // The loader has not seen these dispatchable objects: give them its pointer.
                for cb in cbs {
                    check(set(d.handle, loader_object(cb)))?;
                }
            }
        }
        self.record(d, cbs[0], false)?;
        self.fenced = cbs[0];
        if self.create_events(d).is_ok() && self.record(d, cbs[1], true).is_ok() {
            self.gated = cbs[1];
        }
        Ok(())
    }

    fn create_events(&mut self, d: &DeviceDispatch) -> Result<(), vk::Result> {
        let info = vk::EventCreateInfo::default();
        for event in [&mut self.started, &mut self.go, &mut self.done] {
            // SAFETY: valid create info on a live device; kept in `self` for `destroy`.
            check(unsafe { (d.fp_v1_0.create_event)(d.handle, &info, std::ptr::null(), event) })?;
        }
        Ok(())
    }

    /// Records `cb`: fenced, or gated by the events with `gated`.
    fn record(
        &self,
        d: &DeviceDispatch,
        cb: vk::CommandBuffer,
        gated: bool,
    ) -> Result<(), vk::Result> {
        let fp = &d.fp_v1_0;
        // SAFETY: a fresh primary command buffer of this device; the events and the query
        // exist. Nothing here is inside a render pass.
        unsafe {
            check((fp.begin_command_buffer)(
                cb,
                &vk::CommandBufferBeginInfo::default(),
            ))?;
            (fp.cmd_reset_query_pool)(cb, self.query_pool, 0, 1);
            if gated {
                (fp.cmd_set_event)(cb, self.started, vk::PipelineStageFlags::TOP_OF_PIPE);
                // The timestamp (any stage) is in the wait's second scope.
                (fp.cmd_wait_events)(
                    cb,
                    1,
                    &self.go,
                    vk::PipelineStageFlags::HOST,
                    vk::PipelineStageFlags::ALL_COMMANDS,
                    0,
                    std::ptr::null(),
                    0,
                    std::ptr::null(),
                    0,
                    std::ptr::null(),
                );
            }
            (fp.cmd_write_timestamp)(cb, vk::PipelineStageFlags::TOP_OF_PIPE, self.query_pool, 0);
            if gated {
                // After everything before it, the timestamp included.
                (fp.cmd_set_event)(cb, self.done, vk::PipelineStageFlags::ALL_COMMANDS);
            }
            check((fp.end_command_buffer)(cb))
        }
    }

    /// The timestamp of the last round, as the device wrote it (raw ticks).
    pub fn ticks(&self, d: &DeviceDispatch) -> Result<u64, vk::Result> {
        let mut ticks = 0u64;
        // SAFETY: the round's submission completed (its fence was waited for); 8 bytes.
        check(unsafe {
            (d.fp_v1_0.get_query_pool_results)(
                d.handle,
                self.query_pool,
                0,
                1,
                std::mem::size_of::<u64>(),
                (&mut ticks as *mut u64).cast(),
                std::mem::size_of::<u64>() as u64,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        })?;
        Ok(ticks)
    }

    /// Waits for the last submission (bounded); clears `in_flight` once it completed.
    pub fn wait(&mut self, d: &DeviceDispatch) -> Result<(), vk::Result> {
        // SAFETY: the fence of the last submission, on the live device.
        check(unsafe {
            (d.fp_v1_0.wait_for_fences)(d.handle, 1, &self.fence, vk::TRUE, SUBMIT_TIMEOUT_NS)
        })?;
        self.in_flight = false;
        Ok(())
    }

    pub fn destroy(&mut self, d: &DeviceDispatch) {
        if self.in_flight && self.wait(d).is_err() {
            // Still in use (or the device is lost): leaked rather than freed under the GPU.
            return;
        }
        let fp = &d.fp_v1_0;
        // SAFETY: the objects are idle and null handles are ignored by the destroy
        // commands; the command buffers go with their pool.
        unsafe {
            for event in [self.started, self.go, self.done] {
                (fp.destroy_event)(d.handle, event, std::ptr::null());
            }
            (fp.destroy_fence)(d.handle, self.fence, std::ptr::null());
            (fp.destroy_command_pool)(d.handle, self.command_pool, std::ptr::null());
            (fp.destroy_query_pool)(d.handle, self.query_pool, std::ptr::null());
        }
    }
}
