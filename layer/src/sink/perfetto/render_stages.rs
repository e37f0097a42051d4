//! The Perfetto sink: a device's completed batches as GPU render stages.
//!
//! Per batch, on the device's traceq thread and for every active session instance:
//! - a fresh sequence first gets `SEQ_INCREMENTAL_STATE_CLEARED` with the interned graphics
//!   context (pid, API Vulkan), then a clock snapshot pairing the device's clock (the
//!   sequence-scoped clock [`GPU_CLOCK_ID`]) with `CLOCK_BOOTTIME`; snapshots repeat every
//!   [`SNAPSHOT_PERIOD`](super::sequence_start::SNAPSHOT_PERIOD) so that drift is followed
//!   ([`super::sequence_start`]);
//! - the queue and stage specifications the batch uses for the first time on the sequence
//!   (`stage_specs`),
//!   interned before the events that refer to them;
//! - one `GpuRenderStageEvent` per completed range (a begin and its end) or marker, stamped
//!   with its begin on the GPU clock: duration, queue, stage (a label's stage is named by
//!   the label), submission, command buffer, render pass and framebuffer (render target)
//!   where known, and as `extra_data` the tracepoint's arguments then the batch's `frame`
//!   (which Perfetto has no field for; the text formats' `frame=N`);
//! - a batch of more than [`STAGES_PER_STATE`] stages starts the sequence's state afresh
//!   (clear, context, snapshot, specifications) before each further slice of them;
//! - a `VulkanApiEvent.vk_queue_submit` for the CPU side of the submission;
//! - the application's object names not yet sent on the sequence.
//!
//! At the device's end, its end record as a `GpuLog` message tagged `utrace` (the text
//! formats' `END OF TRACE` line, with the batches, events and events dropped), a warning
//! when events were dropped; a loss makes the file, as a batch does.
//!
//! A range whose end is not in the batch (a label left open) has no duration and is left out.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use perfetto_sdk::data_source::{DataSourceTimestamp, TraceContext};
use perfetto_sdk::protos::trace::trace_packet::{TracePacket, TracePacketSequenceFlags};
use perfetto_sdk_protos_gpu::protos::trace::gpu::gpu_log::{GpuLog, GpuLogSeverity};
use perfetto_sdk_protos_gpu::protos::trace::gpu::vulkan_api_event::{
    VulkanApiEvent, VulkanApiEventVkQueueSubmit,
};
use perfetto_sdk_protos_gpu::protos::trace::trace_packet::prelude::*;

use super::counter_tracks;
use super::sequence::SequenceState;
use super::sequence_start::{DeviceHeader, BOOTTIME_CLOCK_ID, CONTEXT_IID, GPU_CLOCK_ID};
use super::stage_event::{Stage, StageEncoder};
use super::stage_pairs::{each_slice, Range};
use crate::sink::origin::Origin;
use crate::sink::{BatchInfo, DeviceContext, EventPieces, Sink, TraceSummary};

/// Stages written between two fresh starts of a sequence's state within one batch (a
/// clear, the context, a clock snapshot, the specifications used): about 200 KB, so the
/// smallest ring (1 MiB) that wraps inside a huge batch still holds whole slices whose
/// stages can be placed. The restart costs a few hundred bytes.
const STAGES_PER_STATE: usize = 1000;

/// What a stage adds in the file beyond its fields, counted generously (the count tells
/// `file_drain` when a quarter of the ring may be waiting): its packet's tag and length
/// (3 bytes), the sequence id (3) and the uid and pid the service adds (up to 9). A
/// million draws' stages made 9.5 bytes each.
const PACKET_FRAMING: u64 = 16;
/// What a slice of stages adds in the file beyond its stages and the specifications it
/// interns, counted generously: the state started afresh (a clear, the context, a clock
/// snapshot: about 100 bytes). Small: a batch of two stages is one slice, and a count
/// far above the bytes written reads the session more often than it needs.
const SLICE_FRAMING: u64 = 256;
/// A `vk_queue_submit` packet without its command buffers (10 bytes each), generously.
const SUBMIT_BYTES: u64 = 96;
/// Event ids, unique in the process.
static NEXT_EVENT_ID: AtomicU64 = AtomicU64::new(1);

pub struct RenderStageSink {
    pub(super) header: DeviceHeader,
    // Scratch, reused from batch to batch.
    pub(super) stage_iids: Vec<u64>,
    encoder: StageEncoder,
    /// The batch's frame in decimal, written on each of its stages.
    frame_text: String,
    /// The file session's failed writes seen so far (`file_drain::lost_since`).
    losses_seen: u64,
    /// The begin of the last draw whose counters went on the counter tracks: its render
    /// pass's do not (`counter_tracks`).
    last_counted_draw_ns: Option<u64>,
}

impl RenderStageSink {
    pub fn new(device: DeviceContext, origin: Arc<Origin>) -> RenderStageSink {
        RenderStageSink {
            header: DeviceHeader::new(device, origin),
            stage_iids: Vec::new(),
            encoder: StageEncoder::default(),
            frame_text: String::new(),
            losses_seen: 0,
            last_counted_draw_ns: None,
        }
    }

    /// The batch's stages, paired as its pieces come (the ranges still open carried from
    /// one to the next) and written [`STAGES_PER_STATE`] at a time.
    fn write_batch(
        &mut self,
        ctx: &mut TraceContext<'_, SequenceState>,
        state: &mut SequenceState,
        info: &BatchInfo,
        events: &mut dyn EventPieces<'_>,
    ) {
        each_slice(events, STAGES_PER_STATE, &mut |slice, restart| {
            self.write_slice(ctx, state, info, slice, restart)
        });
        self.write_submit(ctx, info);
        super::file_drain::handed(SUBMIT_BYTES + 10 * info.command_buffers.len() as u64);
        self.header.send_names(ctx, state);
    }

    /// One slice of a batch's stages; `restart` after the first: a long batch starts the
    /// sequence's state afresh now and then, so that a ring buffer that wraps inside it
    /// keeps stages that can be placed.
    fn write_slice(
        &mut self,
        ctx: &mut TraceContext<'_, SequenceState>,
        state: &mut SequenceState,
        info: &BatchInfo,
        slice: &[Range<'_>],
        restart: bool,
    ) {
        if super::file_drain::lost_since(&mut self.losses_seen) || restart {
            perfetto_sdk::data_source::Clear::clear(state);
        }
        self.header.start(ctx, state);
        let (queue_iid, interned) = self.intern(ctx, state, info, slice);
        let bytes = self.write_stages(ctx, state, info, queue_iid, slice);
        super::file_drain::handed(bytes + interned + SLICE_FRAMING);
    }

    /// One `GpuRenderStageEvent` per range of `slice` (interned by `intern`); the bytes
    /// written, with each packet's framing in the file.
    fn write_stages(
        &mut self,
        ctx: &mut TraceContext<'_, SequenceState>,
        state: &mut SequenceState,
        info: &BatchInfo,
        queue_iid: u64,
        slice: &[Range<'_>],
    ) -> u64 {
        let mut bytes = 0;
        let submission = info.submission as u32;
        self.frame_text.clear();
        let _ = write!(self.frame_text, "{}", info.frame);
        for (range, stage_iid) in slice.iter().zip(&self.stage_iids) {
            let e = &range.begin;
            let stage = Stage {
                event_id: NEXT_EVENT_ID.fetch_add(1, Ordering::Relaxed),
                duration: range.end_ns.saturating_sub(e.ns),
                queue_iid,
                stage_iid: *stage_iid,
                gpu_id: self.header.device,
                context: CONTEXT_IID,
                submission,
                command_buffer: e.cmd,
                render_pass: range.render_pass,
                render_target: range.framebuffer,
                pipeline_name: e.payload().pipeline().and_then(|p| info.pipeline_name(p)),
                counters: range.end.counters(info),
                frame: &self.frame_text,
            };
            let fields = self.encoder.encode_packet(
                e.ns,
                GPU_CLOCK_ID,
                TracePacketSequenceFlags::SeqNeedsIncrementalState.into(),
                &stage,
                e,
            );
            bytes += fields.len() as u64 + PACKET_FRAMING;
            ctx.add_packet(|packet: &mut TracePacket| packet.msg.append_bytes(fields));
            let last_draw = &mut self.last_counted_draw_ns;
            if let Some(counters) = stage
                .counters
                .filter(|c| counter_tracks::innermost(last_draw, range, c))
            {
                let gpu = self.header.device;
                bytes += counter_tracks::describe(ctx, state, gpu, counters);
                bytes += counter_tracks::sample(ctx, e.ns, gpu, counters, false);
                bytes += counter_tracks::sample(ctx, range.end_ns, gpu, counters, true);
            }
        }
        bytes
    }

    /// The CPU side of the submission: a `vkQueueSubmit` slice on its thread.
    fn write_submit(&self, ctx: &mut TraceContext<'_, SequenceState>, info: &BatchInfo) {
        let submission = info.submission as u32;
        let (pid, submit) = (self.header.pid, info.submit);
        ctx.add_packet(|packet: &mut TracePacket| {
            packet.set_timestamp(submit.start_ns);
            packet.set_timestamp_clock_id(BOOTTIME_CLOCK_ID);
            packet.set_vulkan_api_event(|api: &mut VulkanApiEvent| {
                api.set_vk_queue_submit(|s: &mut VulkanApiEventVkQueueSubmit| {
                    s.set_duration_ns(submit.duration_ns);
                    s.set_pid(pid);
                    s.set_tid(submit.tid);
                    s.set_vk_queue(info.queue);
                    for cb in info.command_buffers {
                        s.set_vk_command_buffers(*cb);
                    }
                    s.set_submission_id(submission);
                });
            });
        });
    }
}

impl Sink for RenderStageSink {
    fn batch(&mut self, info: &BatchInfo, events: &mut dyn EventPieces<'_>) {
        let Some(ds) = super::data_source() else {
            return;
        };
        // Claimed first: a batch too long to finish before the process goes still leaves
        // what it wrote at the path.
        super::batch_traced();
        ds.trace(|ctx| {
            ctx.with_incremental_state(|ctx, state| self.write_batch(ctx, state, info, events));
        });
    }

    fn end_of_frame(&mut self, _device: u32, _frame: u32) {}

    fn end_of_trace(&mut self, summary: &TraceSummary) {
        let Some(ds) = super::data_source() else {
            return;
        };
        let mut line = String::new();
        crate::sink::txt::format_end(summary, &mut line);
        let message = line.trim_end();
        let severity = if summary.dropped > 0 {
            GpuLogSeverity::LogSeverityWarning
        } else {
            GpuLogSeverity::LogSeverityInfo
        };
        if summary.dropped > 0 {
            // A trace that lost events says so at the path, even if nothing else came.
            super::batch_traced();
        }
        let now = DataSourceTimestamp::now();
        // A packet of about a submit's size, counted as one.
        super::file_drain::handed(SUBMIT_BYTES);
        ds.trace(|ctx| {
            ctx.add_packet(|packet: &mut TracePacket| {
                packet.set_timestamp(now.timestamp());
                packet.set_timestamp_clock_id(now.clock_id());
                packet.set_gpu_log(|log: &mut GpuLog| {
                    log.set_severity(severity);
                    log.set_tag("utrace");
                    log.set_log_message(message);
                });
            });
        });
    }
}
