//! Reads a Perfetto trace back with message types of its own (prost, field numbers from
//! Perfetto's protos), independently of the SDK that wrote it, and resolves it the way a
//! trace processor does: interned data per sequence (reset by
//! `SEQ_INCREMENTAL_STATE_CLEARED`), sequence-scoped clocks through the clock snapshots
//! before each packet.

use std::collections::HashMap;

use prost::Message;

mod protos;
pub use protos::*;

const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;
const BOOTTIME: u32 = 6;

/// A render stage with everything it refers to resolved on its own sequence.
#[derive(Debug, Clone)]
pub struct Stage {
    pub sequence: u32,
    pub gpu_ns: u64,
    pub duration: u64,
    /// Start on `CLOCK_BOOTTIME`, through the sequence's latest clock snapshot.
    pub boot_ns: u64,
    pub name: String,
    pub category: i32,
    pub queue: String,
    pub queue_description: String,
    pub submission: u32,
    pub command_buffer: u64,
    pub render_pass: u64,
    pub render_target: u64,
    pub gpu_id: i32,
    /// The arguments: the stage's `extra_data` but its `frame`.
    pub args: Vec<(String, String)>,
    /// The batch's frame: the layer's last `extra_data`, `frame` (`None` without one).
    pub frame: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct Submit {
    pub sequence: u32,
    pub boot_ns: u64,
    pub duration_ns: u64,
    pub pid: u32,
    pub tid: u32,
    pub queue: u64,
    pub command_buffers: Vec<u64>,
    pub submission: u32,
}

#[derive(Debug, Clone)]
pub struct ObjectName {
    /// The packet's timestamp (BOOTTIME).
    pub boot_ns: u64,
    pub object_type: i32,
    pub object: u64,
    pub name: String,
}

/// A trace resolved; every inconsistency a trace processor would stumble on is an error.
#[derive(Debug, Default)]
pub struct Resolved {
    pub stages: Vec<Stage>,
    pub submits: Vec<Submit>,
    pub names: Vec<ObjectName>,
    /// Clock snapshots: (GPU clock value, BOOTTIME) of each, in order.
    pub snapshots: Vec<(u64, u64)>,
    /// Packets that cleared their sequence's incremental state.
    pub clears: usize,
    /// Packets skipped because what they refer to was overwritten (`read_wrapped` only).
    pub skipped: usize,
    /// Packets marked as following a loss on their sequence (`read_wrapped` only).
    pub losses: usize,
    /// The layer's end records (`GpuLog` messages tagged `utrace`), one per device, read
    /// as the text formats' `END OF TRACE` line they repeat; and whether each was a
    /// warning (events were dropped).
    pub ends: Vec<(crate::trace_txt::EndOfTrace, bool)>,
}

#[derive(Default)]
struct SequenceState {
    /// iid -> (name, category, description).
    specs: HashMap<u64, (String, i32, String)>,
    contexts: HashMap<u64, (i32, i32)>,
    /// (sequence-scoped clock id) -> (its value, boottime) at the latest snapshot.
    clocks: HashMap<u32, (u64, u64)>,
    valid: bool,
}

pub fn decode(bytes: &[u8]) -> Result<Trace, String> {
    Trace::decode(bytes).map_err(|e| format!("not a Perfetto trace: {e}"))
}

/// Resolves the packets in file order (a sequence's packets are in the order written).
/// With `wrapped`, packets that need incremental state before their sequence's first clear
/// (or its first clear after a loss the service marked) are skipped and counted (a ring
/// buffer overwrote what they refer to); without, they are an error.
pub fn resolve(trace: &Trace, wrapped: bool) -> Result<Resolved, String> {
    let mut seqs: HashMap<u32, SequenceState> = HashMap::new();
    let mut out = Resolved::default();
    for (i, p) in trace.packet.iter().enumerate() {
        let seq_id = p.trusted_packet_sequence_id.unwrap_or(0);
        let seq = seqs.entry(seq_id).or_default();
        let flags = p.sequence_flags.unwrap_or(0);
        if wrapped && p.previous_packet_dropped == Some(true) {
            // As trace processor does: what was lost may have been the state later packets
            // refer to, so they wait for the next clear.
            seq.valid = false;
            out.losses += 1;
        }
        if flags & SEQ_INCREMENTAL_STATE_CLEARED != 0 {
            // Sequence-scoped clocks are incremental state too.
            seq.specs.clear();
            seq.contexts.clear();
            seq.clocks.clear();
            seq.valid = true;
            out.clears += 1;
        }
        if wrapped && !seq.valid && flags & SEQ_NEEDS_INCREMENTAL_STATE != 0 {
            out.skipped += 1;
            continue;
        }
        if let Some(data) = &p.interned_data {
            if !seq.valid {
                return Err(format!(
                    "packet {i}: interned data before the sequence was cleared"
                ));
            }
            for s in &data.gpu_specifications {
                seq.specs.insert(
                    s.iid.ok_or("a specification without iid")?,
                    (
                        s.name.clone().unwrap_or_default(),
                        s.category.unwrap_or(0),
                        s.description.clone().unwrap_or_default(),
                    ),
                );
            }
            for c in &data.graphics_contexts {
                seq.contexts.insert(
                    c.iid.ok_or("a context without iid")?,
                    (c.pid.unwrap_or(0), c.api.unwrap_or(0)),
                );
            }
        }
        if let Some(cs) = &p.clock_snapshot {
            let boot = cs
                .clocks
                .iter()
                .find(|c| c.clock_id == Some(BOOTTIME))
                .and_then(|c| c.timestamp)
                .ok_or(format!("packet {i}: a clock snapshot without BOOTTIME"))?;
            for c in &cs.clocks {
                let id = c.clock_id.unwrap_or(0);
                if (64..128).contains(&id) {
                    seq.clocks.insert(id, (c.timestamp.unwrap_or(0), boot));
                    out.snapshots.push((c.timestamp.unwrap_or(0), boot));
                }
            }
        }
        if let Some(log) = &p.gpu_log {
            out.ends
                .push(end_record(log).map_err(|e| format!("packet {i}: {e}"))?);
        }
        if let Some(e) = &p.gpu_render_stage_event {
            let ts = p
                .timestamp
                .ok_or(format!("packet {i}: an event without timestamp"))?;
            let clock = p.timestamp_clock_id.unwrap_or(BOOTTIME);
            let boot_ns = if clock == BOOTTIME {
                ts
            } else {
                let (gpu, boot) = seq.clocks.get(&clock).ok_or(format!(
                    "packet {i}: clock {clock} has no snapshot before the event"
                ))?;
                (ts as i128 - *gpu as i128 + *boot as i128) as u64
            };
            let spec = |iid: Option<u64>, what: &str| {
                iid.and_then(|iid| seq.specs.get(&iid))
                    .cloned()
                    .ok_or(format!(
                        "packet {i}: {what} iid {iid:?} not interned on sequence {seq_id}"
                    ))
            };
            let (name, category, _) = spec(e.stage_iid, "stage")?;
            let (queue, _, queue_description) = spec(e.hw_queue_iid, "hw queue")?;
            let context = e.context.ok_or(format!("packet {i}: no context"))?;
            let (args, frame) = args_and_frame(&e.extra_data)
                .map_err(|bad| format!("packet {i}: frame {bad:?} is not a number"))?;
            let (pid, api) = *seq
                .contexts
                .get(&context)
                .ok_or(format!("packet {i}: context {context} not interned"))?;
            if api != 2 || pid <= 0 {
                return Err(format!("packet {i}: context pid {pid} api {api}"));
            }
            out.stages.push(Stage {
                sequence: seq_id,
                gpu_ns: ts,
                duration: e.duration.unwrap_or(0),
                boot_ns,
                name,
                category,
                queue,
                queue_description,
                submission: e.submission_id.unwrap_or(0),
                command_buffer: e.command_buffer_handle.unwrap_or(0),
                render_pass: e.render_pass_handle.unwrap_or(0),
                render_target: e.render_target_handle.unwrap_or(0),
                gpu_id: e.gpu_id.unwrap_or(0),
                args,
                frame,
            });
        }
        if let Some(api) = &p.vulkan_api_event {
            if let Some(s) = &api.vk_queue_submit {
                out.submits.push(Submit {
                    sequence: seq_id,
                    boot_ns: p.timestamp.unwrap_or(0),
                    duration_ns: s.duration_ns.unwrap_or(0),
                    pid: s.pid.unwrap_or(0),
                    tid: s.tid.unwrap_or(0),
                    queue: s.vk_queue.unwrap_or(0),
                    command_buffers: s.vk_command_buffers.clone(),
                    submission: s.submission_id.unwrap_or(0),
                });
            }
            if let Some(n) = &api.vk_debug_utils_object_name {
                out.names.push(ObjectName {
                    boot_ns: p.timestamp.unwrap_or(0),
                    object_type: n.object_type.unwrap_or(0),
                    object: n.object.unwrap_or(0),
                    name: n.object_name.clone().unwrap_or_default(),
                });
            }
        }
    }
    Ok(out)
}

/// Name/value pairs, as `extra_data` holds them.
type Args = Vec<(String, String)>;

/// A stage's `extra_data` as (name, value) pairs, its last `frame` taken out as the frame;
/// `Err` with the value when that is not a number.
fn args_and_frame(extra: &[ExtraData]) -> Result<(Args, Option<u32>), String> {
    let mut args: Args = extra
        .iter()
        .map(|x| {
            (
                x.name.clone().unwrap_or_default(),
                x.value.clone().unwrap_or_default(),
            )
        })
        .collect();
    let Some(at) = args.iter().rposition(|(n, _)| n == "frame") else {
        return Ok((args, None));
    };
    let (_, value) = args.remove(at);
    let frame = value.parse().map_err(|_| value)?;
    Ok((args, Some(frame)))
}

/// Reads and resolves the trace at `path`, panicking with the reason if it is not sound.
pub fn read(path: &std::path::Path) -> Resolved {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let trace = decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    resolve(&trace, false).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// [`read`] for a trace whose ring buffer wrapped: as trace processor does, a sequence's
/// packets that need incremental state are skipped (and counted in
/// [`Resolved::skipped`]) until the sequence's first surviving
/// `SEQ_INCREMENTAL_STATE_CLEARED`; everything after it must resolve.
pub fn read_wrapped(path: &std::path::Path) -> Resolved {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let trace = decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    resolve(&trace, true).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `CLOCK_BOOTTIME - CLOCK_MONOTONIC` now (the workload reports CPU times on the latter).
pub fn boottime_minus_monotonic() -> i64 {
    // BOOTTIME read between two MONOTONIC reads, the narrowest of a few brackets: a test
    // preempted between two bare reads (47.6 us once in CI) shifted every placed time by
    // that much and failed `perfetto::render_stages_match_the_txt_trace_one_to_one`.
    let (width, mono, boot) = (0..16)
        .map(|_| {
            let before = crate::vk::monotonic_ns();
            let boot = crate::vk::boottime_ns();
            let after = crate::vk::monotonic_ns();
            (after - before, before + (after - before) / 2, boot)
        })
        .min()
        .expect("sixteen brackets");
    debug_assert!(width < 1_000_000, "no bracket under a millisecond");
    boot as i64 - mono as i64
}

/// The stage each begin or marker of the spec shows as (`start_draw` -> `Draw`).
pub fn stage_names() -> HashMap<String, String> {
    #[derive(serde::Deserialize)]
    struct Spec {
        tracepoint: Vec<Tp>,
    }
    #[derive(serde::Deserialize)]
    struct Tp {
        name: String,
        stage: Option<String>,
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tracepoints/tracepoints.toml"
    );
    let text = std::fs::read_to_string(path).expect("the tracepoint spec");
    let spec: Spec = toml::from_str(&text).expect("a valid spec");
    spec.tracepoint
        .into_iter()
        .filter_map(|t| Some((t.name, t.stage?)))
        .collect()
}

/// A `GpuLog` end record: tagged `utrace`, its message one `END OF TRACE` line, a warning
/// (severity 4) exactly when events were dropped, otherwise information (3).
fn end_record(log: &protos::GpuLog) -> Result<(crate::trace_txt::EndOfTrace, bool), String> {
    if log.tag.as_deref() != Some("utrace") {
        return Err(format!("a GPU log tagged {:?}", log.tag));
    }
    let message = log.log_message.as_deref().unwrap_or_default();
    let parsed = crate::trace_txt::parse_trace(message)?;
    let end = match &parsed.ends[..] {
        [end] if parsed.batches.is_empty() => end.clone(),
        _ => return Err(format!("a GPU log that is not an end record: {message:?}")),
    };
    let warning = log.severity == Some(4);
    if warning != (end.dropped > 0) || !matches!(log.severity, Some(3 | 4)) {
        return Err(format!("severity {:?} for {message:?}", log.severity));
    }
    Ok((end, warning))
}

/// The GPU counter tracks a trace's first counter descriptor names: (id, name).
pub fn counter_names(trace: &Trace) -> Vec<(u32, String)> {
    let descriptor = trace
        .packet
        .iter()
        .filter_map(|p| p.gpu_counter_event.as_ref()?.counter_descriptor.as_ref())
        .next();
    descriptor.map_or_else(Vec::new, |d| {
        d.specs
            .iter()
            .map(|s| {
                (
                    s.counter_id.unwrap_or(0),
                    s.name.clone().unwrap_or_default(),
                )
            })
            .collect()
    })
}

/// One counter track's samples in order: (packet time, sample).
pub fn counter_samples(trace: &Trace, id: u32) -> Vec<(u64, &GpuCounter)> {
    trace
        .packet
        .iter()
        .filter_map(|p| Some((p.timestamp.unwrap_or(0), p.gpu_counter_event.as_ref()?)))
        .flat_map(|(ts, e)| {
            e.counters
                .iter()
                .filter(move |c| c.counter_id == Some(id))
                .map(move |c| (ts, c))
        })
        .collect()
}
