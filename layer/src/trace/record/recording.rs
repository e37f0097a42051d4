//! The life of each command buffer's trace: begin, the commands recorded between (through
//! [`DeviceTracer::around`], the hot path) and end (its pools, allocation, reset and free:
//! [`super::command_pools`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ash::vk;
use ash::vk::Handle;

use super::command_trace::Bracket;
use super::recorded_trace::RecordedTrace;
use super::recorder::Recorder;
use crate::trace::objects;
use crate::trace::tracepoints::CommandTrace;
use crate::trace::tracepoints::{trace_end_cmd_buffer, trace_start_cmd_buffer};
use crate::trace::DeviceTracer;

impl DeviceTracer {
    /// Runs `f` on a command buffer's trace.
    ///
    /// # Safety
    /// `cb` is the command buffer of the application's current call, which Vulkan requires
    /// to be externally synchronised.
    unsafe fn with_trace(&self, cb: vk::CommandBuffer, f: impl FnOnce(&mut CommandTrace)) {
        // SAFETY: forwarded from the caller.
        if let Some(cell) = unsafe { self.cmdbufs.get(cb) } {
            // SAFETY: forwarded from the caller.
            f(unsafe { cell.trace_mut() });
        }
    }

    /// The frozen trace of a command buffer the application passes in its current call
    /// (a secondary in `vkCmdExecuteCommands`, a submitted one), if it was instrumented.
    ///
    /// # Safety
    /// `cb` is a command buffer of the current call, not being recorded meanwhile (Vulkan
    /// requires it executable).
    pub unsafe fn recorded(&self, cb: vk::CommandBuffer) -> Option<Arc<RecordedTrace>> {
        // SAFETY: forwarded from the caller; the trace is only read.
        let cell = unsafe { self.cmdbufs.get(cb) }?;
        // SAFETY: as above: nothing records into an executable command buffer.
        unsafe { cell.trace() }.recorded().cloned()
    }

    /// Whether any command buffer of the device is being recorded with tracepoints.
    #[inline]
    pub fn recording_in_progress(&self) -> bool {
        self.cmdbufs.any_recording()
    }

    /// A submission that cannot hold a traced command buffer (no recorded trace exists on
    /// the device) is only counted, and true is returned: it passes straight down.
    #[inline]
    pub fn submission_untraced(&self) -> bool {
        if self.chunks.any_recorded_trace() {
            return false;
        }
        self.next_submission();
        true
    }

    /// Records around one intercepted command: `before` and `after` run on the command
    /// buffer's trace, `call` passes the command down between them. A command buffer that is
    /// not instrumented only gets the call. Costs one relaxed load while no instrumented
    /// recording is in progress on the device.
    ///
    /// # Safety
    /// `cb` is the command buffer of the application's current `vkCmd*` call.
    #[inline]
    pub unsafe fn around(
        &self,
        cb: vk::CommandBuffer,
        before: impl FnOnce(&Recorder<'_>, &mut CommandTrace),
        call: impl FnOnce(),
        after: impl FnOnce(&Recorder<'_>, &mut CommandTrace),
    ) {
        if !self.cmdbufs.any_recording() {
            return call();
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.around_recording(cb, |_| None, before, call, after) }
    }

    /// [`Self::around`] for a hook that has already seen a recording in progress (the
    /// `bracketed!` hooks test that on their idle path).
    ///
    /// `both` is the short path of a command whose two tracepoints can be recorded at once
    /// (`CommandTrace::append_bracket`; other commands decline): where it gives their
    /// places, the start's timestamp is written, the call goes down and the end's
    /// timestamp follows, with no closure guarded (nothing there allocates or indexes).
    /// Otherwise `before` and `after` run in guards of their own and the call goes down
    /// between them, exactly once whatever the layer's part does; after a panic in
    /// `before`, `after` is left out (the trace may be half-written; the device's health
    /// turns tracing off).
    ///
    /// # Safety
    /// As [`Self::around`].
    #[inline]
    pub unsafe fn around_recording(
        &self,
        cb: vk::CommandBuffer,
        both: impl FnOnce(&mut CommandTrace) -> Option<Bracket>,
        before: impl FnOnce(&Recorder<'_>, &mut CommandTrace),
        call: impl FnOnce(),
        after: impl FnOnce(&Recorder<'_>, &mut CommandTrace),
    ) {
        // SAFETY: forwarded from the caller.
        let Some(cell) = (unsafe { self.cmdbufs.get(cb) }) else {
            return call();
        };
        // SAFETY: a `vkCmd*` call is externally synchronised for its command buffer.
        let trace = unsafe { cell.trace_mut() };
        if let Some(Bracket { start, end }) = both(trace) {
            let timestamps = self.backend.timestamps();
            // SAFETY: the command buffer is recording (the trace had room for its events)
            // and every batch that runs it re-arms the queries first.
            unsafe { timestamps.write(cb, false, start.pool, start.query) };
            call();
            // SAFETY: as above.
            unsafe { timestamps.write(cb, true, end.pool, end.query) };
            return;
        }
        if !trace.is_instrumented() {
            return call();
        }
        let rec = self.recorder(cb);
        let before_done = self
            .guarded("recording a tracepoint", || before(&rec, trace))
            .is_some();
        call();
        if before_done {
            self.guarded("recording a tracepoint", || after(&rec, trace));
        }
    }

    /// After a successful `vkResetCommandBuffer`.
    pub fn reset_command_buffer(&self, cb: vk::CommandBuffer) {
        // SAFETY: the reset is externally synchronised for `cb`.
        unsafe { self.with_trace(cb, |t| self.reset_trace(t)) };
    }

    /// The pipeline statistics a secondary about to be begun must inherit
    /// (`VkCommandBufferInheritanceInfo::pipelineStatistics`): those of the queries a
    /// primary of its family may have active across `vkCmdExecuteCommands` (see
    /// `counted::begin_pass_statistics`), where they may be.
    ///
    /// # Safety
    /// `cb` is the command buffer of the application's current call.
    pub unsafe fn statistics_to_inherit(
        &self,
        cb: vk::CommandBuffer,
    ) -> Option<vk::QueryPipelineStatisticFlags> {
        if !self.backend.statistics_across_secondaries() {
            return None;
        }
        let mut inherit = None;
        // SAFETY: forwarded from the caller.
        unsafe {
            self.with_trace(cb, |t| {
                if t.level == vk::CommandBufferLevel::SECONDARY {
                    inherit = self.backend.statistics_for(t.family);
                }
            })
        };
        inherit
    }

    /// After a successful `vkBeginCommandBuffer`. Secondaries recorded for simultaneous use
    /// are not instrumented: one recording may then run several times in one submission with
    /// no point in between where its queries could be re-armed.
    pub fn begin(&self, cb: vk::CommandBuffer, info: &vk::CommandBufferBeginInfo<'_>) {
        let usage = info.flags;
        let begin = |t: &mut CommandTrace| {
            self.reset_trace(t);
            let level = t.level;
            let secondary = level == vk::CommandBufferLevel::SECONDARY;
            if !self.health.recording()
                || !self.capture.instrumenting()
                || !self.backend.caps().family_traceable(t.family)
                || (secondary && usage.contains(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE))
            {
                return;
            }
            let views =
                if secondary && usage.contains(vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE) {
                    // SAFETY: a secondary that continues a render pass has inheritance info.
                    unsafe { self.inherited_view_mask(info) }.map_or(1, objects::views)
                } else {
                    1
                };
            t.begin_recording(views, usage);
            // Pipeline statistics: primaries (see `counted`). A simultaneous-use one's runs
            // may be pending together: each resets the queries at its begin and the
            // layer's copy after it reads them, which query commands on one queue order.
            if level == vk::CommandBufferLevel::PRIMARY {
                if let Some(statistics) = self.backend.statistics_for(t.family) {
                    t.count_statistics(&self.recorder(cb), statistics);
                }
            }
            // Hardware counters: primaries not for simultaneous use (see
            // `record::hardware`); a query spanning the whole command buffer begins first,
            // before any other command.
            if let Some(h) = self.backend.hardware() {
                if level == vk::CommandBufferLevel::PRIMARY && h.counters_of(t.family).is_some() {
                    if usage.contains(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE) {
                        crate::trace::record::hardware::simultaneous_said_once();
                    } else {
                        t.count_hardware(&self.recorder(cb), h.command_buffer_scope);
                    }
                }
            }
            self.cmdbufs.recording_started();
            // The recording thread: which thread fed the GPU, next to the submitting one.
            let thread = crate::gpu::interface::cpu_clock::tid();
            trace_start_cmd_buffer(&self.recorder(cb), t, cb.as_raw(), level, usage, thread);
        };
        // SAFETY: `vkBeginCommandBuffer` is externally synchronised for `cb`.
        unsafe { self.with_trace(cb, begin) };
    }

    /// The view mask a render-pass-continuing secondary inherits.
    ///
    /// # Safety
    /// `info` must be the application's valid begin info.
    unsafe fn inherited_view_mask(&self, info: &vk::CommandBufferBeginInfo<'_>) -> Option<u32> {
        // SAFETY: forwarded from the caller; the inheritance chain is read by sType.
        let inheritance = unsafe { info.p_inheritance_info.as_ref() }?;
        if inheritance.render_pass != vk::RenderPass::null() {
            return self.objects.render_pass(inheritance.render_pass, |rp| {
                rp.view_mask(inheritance.subpass)
            });
        }
        let mut next = inheritance.p_next.cast::<vk::BaseInStructure>();
        while !next.is_null() {
            // SAFETY: a valid chain element, read as the type its sType names.
            unsafe {
                if (*next).s_type == vk::StructureType::COMMAND_BUFFER_INHERITANCE_RENDERING_INFO {
                    return Some(
                        (*next.cast::<vk::CommandBufferInheritanceRenderingInfo>()).view_mask,
                    );
                }
                next = (*next).p_next;
            }
        }
        None
    }

    /// Before `vkEndCommandBuffer` is passed down, or earlier: before an application's
    /// `vkCmdEndQuery` of a query of command-buffer scope, which must be the command
    /// buffer's last command (the later call then finds it ended).
    pub fn end(&self, cb: vk::CommandBuffer) {
        let end = |t: &mut CommandTrace| {
            if !t.is_recording() {
                return;
            }
            let before = t.events_len();
            if t.is_instrumented() {
                trace_end_cmd_buffer(&self.recorder(cb), t, cb.as_raw());
            }
            // The command buffer's own range ends at that event, where it was recorded
            // (its tracepoint may be off): its counters go there or nowhere.
            let end_event = t.just_recorded(before);
            if t.finish(cb, &self.chunks, end_event) {
                self.cmdbufs.recording_ended();
            }
        };
        // SAFETY: `vkEndCommandBuffer` is externally synchronised for `cb`.
        unsafe { self.with_trace(cb, end) };
    }

    pub fn recorder(&self, cmd: vk::CommandBuffer) -> Recorder<'_> {
        Recorder {
            timestamps: self.backend.timestamps(),
            chunks: &self.chunks,
            objects: &self.objects,
            cmd,
        }
    }

    /// Counts a `vkQueueSubmit*` call; returns its number (from 1).
    pub fn next_submission(&self) -> u64 {
        self.submissions.fetch_add(1, Ordering::Relaxed) + 1
    }
}
