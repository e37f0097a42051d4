//! Perfetto packets into batches of begin and end events, as the layer's text formats
//! have them.
//!
//! Each sequence (one device's writer) has its own interned names, forgotten at every
//! `SEQ_INCREMENTAL_STATE_CLEARED`, so the same iid may name different stages before and
//! after a clear. A stage is one range (begin + duration) or marker; the stages of one
//! submission on one queue of one device make a batch, and the `vk_queue_submit` that
//! follows them names the submitting thread. A stage becomes the begin tracepoint of its
//! stage name (the spec's `stage`; a stage named by a label is a `label` range) with its
//! `extra_data` as arguments, and the end tracepoint of its range at begin + duration,
//! with the GPU counters among them (as the layer's text formats have them). The
//! `extra_data` named `frame` (the layer writes it last) is the batch's frame, not an
//! argument; stages of older layers have none and stay in frame 0.
//!
//! The stages are on the device's clock (the sequence's clock 64); the submission's CPU
//! time is on `CLOCK_BOOTTIME`. The sequence's latest clock snapshot pairs the two, so the
//! submit time is moved onto the device's clock: the batch's `submit_ns`.

use std::collections::HashMap;

use super::{number, Batch, Event, Trace};
use crate::tracepoint_spec::StageSpec;
use utrace_format::perfetto::{
    GpuRenderStageEvent, TracePacket, CLOCK_BOOTTIME, SEQ_INCREMENTAL_STATE_CLEARED,
};
use utrace_format::{text_args, PERFETTO_FRAME_EXTRA};

/// An interned specification: a stage's or a hardware queue's name.
struct Interned {
    name: String,
    description: String,
}

/// What identifies a batch: sequence, device, queue track, submission.
type Key = (u32, u32, String, u32);

/// The sequence-scoped clock the layer stamps its stages with (the device's).
const GPU_CLOCK_ID: u32 = 64;

/// A stage as read, in the order the stages were written (the order their ends came in).
struct Stage {
    ns: u64,
    duration: u64,
    begin: String,
    /// `None` for a marker.
    end: Option<String>,
    args: String,
    /// The GPU counters among its `extra_data`, which the layer's other formats put on
    /// the range's end event.
    end_args: String,
}

struct Building {
    batch: Batch,
    stages: Vec<Stage>,
}

pub struct Assembler<'s> {
    spec: &'s StageSpec,
    interned: HashMap<u32, HashMap<u64, Interned>>,
    building: Vec<Building>,
    /// Batches that may get more stages: index into `building` by key.
    open: HashMap<Key, usize>,
    /// Batches numbered per device, from 1, as the layer does.
    numbers: HashMap<u32, u64>,
    /// Stages naming a stage or queue not interned on their sequence, or without a time.
    unresolved: usize,
    /// Stages whose `frame` is not a number (kept as an argument).
    bad_frames: usize,
    /// Per sequence, its latest clock snapshot: (boottime ns, device clock ns).
    clocks: HashMap<u32, (u64, u64)>,
}

impl<'s> Assembler<'s> {
    pub fn new(spec: &'s StageSpec) -> Assembler<'s> {
        Assembler {
            spec,
            interned: HashMap::new(),
            building: Vec::new(),
            open: HashMap::new(),
            numbers: HashMap::new(),
            unresolved: 0,
            bad_frames: 0,
            clocks: HashMap::new(),
        }
    }

    pub fn packet(&mut self, p: &TracePacket) {
        let sequence = p.trusted_packet_sequence_id.unwrap_or(0);
        let interned = self.interned.entry(sequence).or_default();
        if p.sequence_flags.unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED != 0 {
            interned.clear();
        }
        if let Some(data) = &p.interned_data {
            for s in &data.gpu_specifications {
                let Some(iid) = s.iid else { continue };
                interned.insert(
                    iid,
                    Interned {
                        name: s.name.clone().unwrap_or_default(),
                        description: s.description.clone().unwrap_or_default(),
                    },
                );
            }
        }
        if let Some(snapshot) = &p.clock_snapshot {
            let at = |id| {
                snapshot
                    .clocks
                    .iter()
                    .find(|c| c.clock_id == Some(id))
                    .and_then(|c| c.timestamp)
            };
            if let (Some(boot), Some(gpu)) = (at(CLOCK_BOOTTIME), at(GPU_CLOCK_ID)) {
                self.clocks.insert(sequence, (boot, gpu));
            }
        }
        if let Some(e) = &p.gpu_render_stage_event {
            if self.stage(sequence, p.timestamp, e).is_none() {
                self.unresolved += 1;
            }
        }
        if let Some(submit) = p
            .vulkan_api_event
            .as_ref()
            .and_then(|a| a.vk_queue_submit.as_ref())
        {
            // The CPU side of a submission, written after its stages: it closes the batch.
            let submission = submit.submission_id.unwrap_or(0);
            let found = self.open.iter().find_map(|(key, &at)| {
                let b = &self.building[at].batch;
                let same_queue = b.queue.is_none() || b.queue == submit.vk_queue;
                (key.0 == sequence && key.3 == submission && same_queue).then(|| key.clone())
            });
            if let Some(at) = found.and_then(|key| self.open.remove(&key)) {
                let submit_ns = self.submit_on_gpu_clock(sequence, p);
                let batch = &mut self.building[at].batch;
                batch.thread = submit.tid.map(u64::from);
                batch.submit_ns = submit_ns;
            }
        }
    }

    /// The submit packet's time on the sequence's device clock, by its latest snapshot;
    /// `None` without one or when the packet is not on `CLOCK_BOOTTIME`.
    fn submit_on_gpu_clock(&self, sequence: u32, p: &TracePacket) -> Option<u64> {
        let boot = p.timestamp?;
        if p.timestamp_clock_id.unwrap_or(CLOCK_BOOTTIME) != CLOCK_BOOTTIME {
            return None;
        }
        let &(snap_boot, snap_gpu) = self.clocks.get(&sequence)?;
        let gpu = i128::from(snap_gpu) + i128::from(boot) - i128::from(snap_boot);
        u64::try_from(gpu).ok()
    }

    /// Adds one stage to its batch; `None` when it cannot be placed.
    fn stage(&mut self, sequence: u32, ts: Option<u64>, e: &GpuRenderStageEvent) -> Option<()> {
        let interned = self.interned.get(&sequence)?;
        let name = &interned.get(&e.stage_iid?)?.name;
        let queue = interned.get(&e.hw_queue_iid?)?;
        let ns = ts?;
        let duration = e.duration.unwrap_or(0);
        let mut pairs: Vec<(String, String)> = e
            .extra_data
            .iter()
            .map(|x| {
                (
                    x.name.clone().unwrap_or_default(),
                    x.value.clone().unwrap_or_default(),
                )
            })
            .collect();
        let label = self.spec.label_in(&pairs);
        let (begin, is_label) = self.spec.begin_of_stage(name, label, duration)?;
        let frame = match take_frame(&mut pairs, &begin.args) {
            Ok(frame) => frame,
            Err(()) => {
                self.bad_frames += 1;
                None
            }
        };
        if let (true, Some(arg)) = (is_label, begin.label_arg()) {
            if !pairs.iter().any(|(n, _)| n == arg) {
                // A stage from another writer, named by its text: the label it stands for.
                pairs.insert(0, (arg.to_string(), name.clone()));
            }
        }
        let end = self.spec.end_of(begin).map(|t| t.name.clone());
        let (counters, pairs): (Vec<_>, Vec<_>) = pairs
            .into_iter()
            .partition(|(n, _)| end.is_some() && is_counter(n));
        let stage = Stage {
            ns,
            duration,
            begin: begin.name.clone(),
            end,
            args: text_args::format(&pairs, &begin.args),
            end_args: text_args::format(&counters, &[]),
        };
        let device = e.gpu_id.and_then(|g| u32::try_from(g).ok()).unwrap_or(0);
        let submission = e.submission_id.unwrap_or(0);
        let key = (
            sequence,
            device,
            format!("{}\n{}", queue.name, queue.description),
            submission,
        );
        let at = match self.open.get(&key) {
            Some(&at) => at,
            None => {
                let number = self.numbers.entry(device).or_default();
                *number += 1;
                self.building.push(Building {
                    batch: Batch {
                        device,
                        number: *number,
                        queue: queue_handle(&queue.description),
                        submission: u64::from(submission),
                        ..Batch::default()
                    },
                    stages: Vec::new(),
                });
                self.open.insert(key, self.building.len() - 1);
                self.building.len() - 1
            }
        };
        let building = &mut self.building[at];
        if let Some(frame) = frame {
            building.batch.frame = frame;
        }
        building.stages.push(stage);
        Some(())
    }

    pub fn finish(self) -> Trace {
        let mut trace = Trace::default();
        if self.unresolved > 0 {
            trace.notes.push(format!(
                "skipped {} stage events: their stage or queue is not interned on their sequence (the start of a ring buffer that wrapped?) or they have no time",
                self.unresolved
            ));
        }
        if self.bad_frames > 0 {
            trace.notes.push(format!(
                "{} stage events carry a `{PERFETTO_FRAME_EXTRA}` that is not a frame number; kept as an argument, their batch in frame 0",
                self.bad_frames
            ));
        }
        for mut b in self.building {
            b.batch.events = events(&b.stages);
            trace.batches.push(b.batch);
        }
        trace
    }
}

/// Takes the batch's frame out of a stage's `extra_data` (the last `frame` entry, unless the
/// begin tracepoint has an argument of that name); `Err` when it is not a number, in which
/// case it stays among the arguments.
fn take_frame(
    pairs: &mut Vec<(String, String)>,
    args: &[(String, utrace_format::ValueKind)],
) -> Result<Option<u64>, ()> {
    if args.iter().any(|(name, _)| name == PERFETTO_FRAME_EXTRA) {
        return Ok(None);
    }
    let Some(at) = pairs.iter().rposition(|(n, _)| n == PERFETTO_FRAME_EXTRA) else {
        return Ok(None);
    };
    let frame = pairs[at].1.parse().map_err(|_| ())?;
    pairs.remove(at);
    Ok(Some(frame))
}

/// The handle in a queue track's description (`VkQueue 0x...: family F, index I`, and
/// `; GPU clock measured to within N ns` where the layer measured the clock).
fn queue_handle(description: &str) -> Option<u64> {
    let rest = description.strip_prefix("VkQueue ")?;
    number(rest.split(':').next()?.trim())
}

/// Where an event goes: its time; 0 for ends, markers and ranges of no duration, 1 for
/// begins; then the stage's place among those (see [`events`]).
type Order = (u64, u8, u64, u64, u8);

/// A batch's stages as begin and end events in time order, ordered so that pairing finds
/// the stages again: at one time, ends (and markers, and ranges of no duration, begin then
/// end) come first, in the order written (inner ranges end first), then begins, the longer
/// (outer) range first.
fn events(stages: &[Stage]) -> Vec<Event> {
    let mut keyed: Vec<(Order, Event)> = Vec::new();
    let event = |ns, name: &str, args: &str| Event {
        ns,
        name: name.to_string(),
        args: args.to_string(),
    };
    for (k, s) in stages.iter().enumerate() {
        let k = k as u64;
        let Some(end) = &s.end else {
            keyed.push(((s.ns, 0, k, 0, 0), event(s.ns, &s.begin, &s.args)));
            continue;
        };
        let end_ns = s.ns.saturating_add(s.duration);
        let begin_key = if s.duration == 0 {
            (s.ns, 0, k, 0, 0)
        } else {
            (s.ns, 1, u64::MAX - s.duration, u64::MAX - k, 0)
        };
        keyed.push((begin_key, event(s.ns, &s.begin, &s.args)));
        keyed.push(((end_ns, 0, k, 0, 1), event(end_ns, end, &s.end_args)));
    }
    keyed.sort_by_key(|(key, _)| *key);
    keyed.into_iter().map(|(_, e)| e).collect()
}

/// Whether `extra_data` named `name` is a GPU counter (a pipeline statistic, a hardware
/// counter, or `partial`).
fn is_counter(name: &str) -> bool {
    name == "partial"
        || name.starts_with(utrace_format::PERF_PREFIX)
        || utrace_format::COUNTER_NAMES.contains(&name)
}
