//! Any trace (txt, json, csv or Perfetto, read into the one model) written as Perfetto GPU
//! render stages, as the layer's Perfetto sink writes them: per device a sequence whose
//! first packet clears its incremental state and interns the graphics context; a hardware
//! queue track per queue and a specification per stage name interned before the stages
//! that use them (a label's stage named by its text); one `GpuRenderStageEvent` per range
//! and marker, with its begin's arguments, those of its end it lacks (a counted range's GPU
//! counters), then its batch's `frame` as `extra_data`, its
//! submission, command buffer and render pass; then a `vk_queue_submit` per batch, at its
//! submit time where the trace has one. Times stay the trace's (GPU) nanoseconds, stamped on
//! `CLOCK_BOOTTIME`, Perfetto's default clock: the text formats hold no clock pairing to
//! move them onto the CPU's timeline. Each sequence's first packet says so to readers: a
//! clock snapshot pairing the device clock with `CLOCK_BOOTTIME` one to one, so that
//! submit times read back onto the device clock unchanged.

use std::collections::HashMap;
use std::io::Write;

use utrace_format::{Category, RangeKind, PERFETTO_FRAME_EXTRA};

use crate::trace::{Batch, Trace};
use crate::tracepoint_spec::{StageSpec, Tracepoint};
use utrace_format::perfetto::{
    encode_packet, Clock, ClockSnapshot, ExtraData, Gpu, GpuInfo, GpuKeyValue, GpuRenderStageEvent,
    InternedData, InternedGpuRenderStageSpecification, InternedGraphicsContext, TracePacket,
    VkQueueSubmit, VulkanApiEvent, API_VULKAN, CATEGORY_COMPUTE, CATEGORY_GRAPHICS, CATEGORY_OTHER,
    CLOCK_BOOTTIME, SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE,
};
use utrace_format::text_args;

/// The device clock's id, sequence-scoped as the layer's.
const GPU_CLOCK_ID: u32 = 64;
/// The interned graphics context of every sequence (one per device).
const CONTEXT_IID: u64 = 1;
/// The traced process's id is not in the text formats; Perfetto wants one above zero.
const PID: i32 = 1;

/// A stage to write: a completed range or a marker of one batch.
struct Stage<'t> {
    begin: usize,
    tracepoint: &'t Tracepoint,
    end_ns: u64,
    /// The begin's arguments, as name/value pairs.
    pairs: Vec<(String, String)>,
    command_buffer: Option<u64>,
    render_pass: Option<u64>,
    framebuffer: Option<u64>,
}

/// What one device's sequence has interned.
#[derive(Default)]
struct Sequence {
    queues: HashMap<Option<u64>, u64>,
    /// By name, and whether it is a label's (the layer interns those apart).
    stages: HashMap<(String, bool), u64>,
    next_iid: u64,
}

/// Writes `trace` to `out` as a Perfetto trace.
pub fn write(trace: &Trace, spec: &StageSpec, out: &mut impl Write) -> Result<(), String> {
    let mut sequences: HashMap<u32, Sequence> = HashMap::new();
    let mut event_id = 0u64;
    let mut bytes = Vec::new();
    for batch in &trace.batches {
        bytes.clear();
        let sequence_id = batch.device.saturating_add(1);
        let seq = sequences.entry(batch.device).or_insert_with(|| {
            encode_packet(&first_packet(sequence_id), &mut bytes);
            // The device's header, where the trace has one, as the layer writes it.
            if let Some(origin) = trace.origins.iter().find(|o| o.device == batch.device) {
                encode_packet(&origin_packet(origin, sequence_id), &mut bytes);
            }
            Sequence::default()
        });
        let stages = pair(batch, spec);
        let (queue_iid, stage_iids, new) = intern(seq, batch, spec, &stages);
        if !new.is_empty() {
            encode_packet(
                &TracePacket {
                    trusted_packet_sequence_id: Some(sequence_id),
                    sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                    interned_data: Some(InternedData {
                        gpu_specifications: new,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                &mut bytes,
            );
        }
        for (s, stage_iid) in stages.iter().zip(stage_iids) {
            event_id += 1;
            let begin_ns = batch.events[s.begin].ns;
            let event = GpuRenderStageEvent {
                event_id: Some(event_id),
                duration: Some(s.end_ns.saturating_sub(begin_ns)),
                context: Some(CONTEXT_IID),
                extra_data: s
                    .pairs
                    .iter()
                    .map(|(name, value)| ExtraData {
                        name: Some(name.clone()),
                        value: Some(value.clone()),
                    })
                    .chain(std::iter::once(ExtraData {
                        name: Some(PERFETTO_FRAME_EXTRA.to_string()),
                        value: Some(batch.frame.to_string()),
                    }))
                    .collect(),
                render_target_handle: s.framebuffer,
                render_pass_handle: s.render_pass,
                submission_id: Some(batch.submission as u32),
                gpu_id: i32::try_from(batch.device).ok(),
                command_buffer_handle: s.command_buffer,
                hw_queue_iid: Some(queue_iid),
                stage_iid: Some(stage_iid),
            };
            encode_packet(
                &TracePacket {
                    timestamp: Some(begin_ns),
                    timestamp_clock_id: Some(CLOCK_BOOTTIME),
                    trusted_packet_sequence_id: Some(sequence_id),
                    sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                    gpu_render_stage_event: Some(event),
                    ..Default::default()
                },
                &mut bytes,
            );
        }
        encode_packet(&submit_packet(batch, sequence_id, &stages), &mut bytes);
        out.write_all(&bytes).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}

/// A sequence's first packet: its state cleared, the graphics context interned, the device
/// clock paired one to one with the stamps' clock.
/// A device's header as a `gpu_info` packet, its fields as `extra_info`.
fn origin_packet(origin: &crate::trace::origin::Origin, sequence_id: u32) -> TracePacket {
    let kv = |k: &str, v: &str| GpuKeyValue {
        key: Some(k.to_string()),
        value: Some(v.to_string()),
    };
    let mut extra_info = vec![kv("device", &origin.device.to_string())];
    extra_info.extend(origin.fields.iter().map(|(k, v)| kv(k, v)));
    let field = |k| origin.get(k).map(str::to_string);
    TracePacket {
        trusted_packet_sequence_id: Some(sequence_id),
        gpu_info: Some(GpuInfo {
            gpus: vec![Gpu {
                name: field("device_name"),
                vendor: field("vendor_id"),
                model: field("driver_info"),
                extra_info,
            }],
        }),
        ..Default::default()
    }
}

fn first_packet(sequence_id: u32) -> TracePacket {
    let clock = |id| Clock {
        clock_id: Some(id),
        timestamp: Some(0),
    };
    TracePacket {
        clock_snapshot: Some(ClockSnapshot {
            clocks: vec![clock(CLOCK_BOOTTIME), clock(GPU_CLOCK_ID)],
        }),
        trusted_packet_sequence_id: Some(sequence_id),
        sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE),
        interned_data: Some(InternedData {
            graphics_contexts: vec![InternedGraphicsContext {
                iid: Some(CONTEXT_IID),
                pid: Some(PID),
                api: Some(API_VULKAN),
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The CPU side of the batch: its queue, thread, submission and command buffers (those
/// its primary `cmd_buffer` ranges name), at its submit time where the trace has one, else
/// at its first event's.
fn submit_packet(batch: &Batch, sequence_id: u32, stages: &[Stage<'_>]) -> TracePacket {
    // Stages are in the order their ends came; the batch ran its command buffers in the
    // order they began.
    let mut primaries: Vec<(usize, u64)> = stages
        .iter()
        .filter(|s| s.tracepoint.range == "cmd_buffer")
        .filter(|s| {
            !s.pairs
                .iter()
                .any(|(n, v)| n == "level" && v == "secondary")
        })
        .filter_map(|s| Some((s.begin, s.command_buffer?)))
        .collect();
    primaries.sort();
    TracePacket {
        timestamp: batch.submit_ns.or(batch.events.first().map(|e| e.ns)),
        timestamp_clock_id: Some(CLOCK_BOOTTIME),
        trusted_packet_sequence_id: Some(sequence_id),
        vulkan_api_event: Some(VulkanApiEvent {
            vk_queue_submit: Some(VkQueueSubmit {
                pid: Some(PID as u32),
                tid: batch.thread.and_then(|t| u32::try_from(t).ok()),
                vk_queue: batch.queue,
                vk_command_buffers: primaries.into_iter().map(|(_, c)| c).collect(),
                submission_id: Some(batch.submission as u32),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The batch's ranges (each begin with the innermost open begin of its range, as
/// `ranges::pair` does, so that every range `report` counts is written) and markers, in
/// the order their ends came, each knowing its command buffer and render pass.
fn pair<'t>(batch: &Batch, spec: &'t StageSpec) -> Vec<Stage<'t>> {
    let mut open: Vec<Stage<'t>> = Vec::new();
    let mut done = Vec::new();
    for (i, e) in batch.events.iter().enumerate() {
        let Some(tp) = spec.tracepoint(&e.name) else {
            continue;
        };
        let handle = |pairs: &[(String, String)], name: &str| {
            text_args::handle(&pairs.iter().find(|(n, _)| n == name)?.1)
        };
        // The innermost open stage holds its own handle or the one it found when it began,
        // so it answers for the whole stack (looking down the stack at every event was
        // quadratic in the nesting: 20,000 nested labels took 7 s).
        let within = |get: fn(&Stage<'t>) -> Option<u64>| open.last().and_then(get);
        let pairs = text_args::parse(&e.args);
        let stage = Stage {
            begin: i,
            tracepoint: tp,
            end_ns: e.ns,
            command_buffer: handle(&pairs, "cmd").or_else(|| within(|s| s.command_buffer)),
            render_pass: handle(&pairs, "render_pass").or_else(|| within(|s| s.render_pass)),
            framebuffer: handle(&pairs, "framebuffer").or_else(|| within(|s| s.framebuffer)),
            pairs,
        };
        match tp.kind {
            RangeKind::Begin => open.push(stage),
            RangeKind::Marker => done.push(stage),
            RangeKind::End => {
                if let Some(at) = open.iter().rposition(|o| o.tracepoint.range == tp.range) {
                    let mut s = open.remove(at);
                    s.end_ns = e.ns;
                    // The end's arguments the begin lacks: a counted range's GPU counters.
                    for (k, v) in stage.pairs {
                        if !s.pairs.iter().any(|(n, _)| *n == k) {
                            s.pairs.push((k, v));
                        }
                    }
                    done.push(s);
                }
            }
        }
    }
    done
}

/// The iids of the batch's queue and of each stage's name, interning the new ones (returned,
/// to be sent before the stages).
fn intern(
    seq: &mut Sequence,
    batch: &Batch,
    spec: &StageSpec,
    stages: &[Stage<'_>],
) -> (u64, Vec<u64>, Vec<InternedGpuRenderStageSpecification>) {
    let mut new = Vec::new();
    let mut iid_of = |seq: &mut Sequence, name: String, description, category| {
        seq.next_iid += 1;
        new.push(InternedGpuRenderStageSpecification {
            iid: Some(seq.next_iid),
            name: Some(name),
            description,
            category: Some(category),
        });
        seq.next_iid
    };
    let queue = match seq.queues.get(&batch.queue) {
        Some(&iid) => iid,
        None => {
            let (name, description) = match batch.queue {
                Some(q) => (
                    format!("Vulkan queue {q:#x}"),
                    format!("VkQueue {q:#x}: device {}", batch.device),
                ),
                None => (
                    "Vulkan queue".to_string(),
                    format!("device {}", batch.device),
                ),
            };
            let iid = iid_of(seq, name, Some(description), CATEGORY_OTHER);
            seq.queues.insert(batch.queue, iid);
            iid
        }
    };
    let mut iids = Vec::with_capacity(stages.len());
    for s in stages {
        let label = s
            .tracepoint
            .label_arg()
            .and_then(|arg| s.pairs.iter().find(|(n, _)| n == arg))
            .map(|(_, v)| v.as_str());
        let name = spec.stage_of(s.tracepoint, label);
        let key = (name.to_string(), label.is_some());
        let iid = match seq.stages.get(&key) {
            Some(&iid) => iid,
            None => {
                let category = match s.tracepoint.category {
                    Some(Category::Graphics) => CATEGORY_GRAPHICS,
                    Some(Category::Compute) => CATEGORY_COMPUTE,
                    _ => CATEGORY_OTHER,
                };
                let iid = iid_of(seq, key.0.clone(), None, category);
                seq.stages.insert(key, iid);
                iid
            }
        };
        iids.push(iid);
    }
    (queue, iids, new)
}
