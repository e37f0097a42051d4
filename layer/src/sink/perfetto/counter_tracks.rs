//! Pipeline statistics as Perfetto GPU counter tracks (`GPU_TRACE_COUNTERS=pipeline`),
//! beside the render stages, as AGI's traces lay out GPU counters: a
//! `GpuCounterEvent.counter_descriptor` names the seven statistics once per sequence state
//! (nine with task and mesh shader invocations, where the device counts them),
//! then each innermost counted range sets its statistics at its begin and sets them back
//! to 0 at its end, so that a track shows each draw's or dispatch's count during it.
//!
//! Only the innermost counted ranges are drawn: a render pass whose draws were counted
//! would overlap them on the same tracks, and a command buffer's sum would cover all.
//!
//! Hardware counters (`perf:NAME,...`) are laid out the same way: their descriptor names
//! their keys (ids from [`HARDWARE_IDS`]), and each counted render pass or command buffer
//! sets them at its begin and back to 0 at its end, a counter stored as a float as a
//! `double_value`.

use perfetto_sdk::data_source::TraceContext;
use perfetto_sdk::protos::trace::trace_packet::{TracePacket, TracePacketSequenceFlags};
use perfetto_sdk_protos_gpu::protos::common::gpu_counter_descriptor::{
    GpuCounterDescriptor, GpuCounterDescriptorGpuCounterGroup as Group,
    GpuCounterDescriptorGpuCounterSpec as Spec, GpuCounterDescriptorMeasureUnit as Unit,
};
use perfetto_sdk_protos_gpu::protos::trace::gpu::gpu_counter_event::{
    GpuCounterEvent, GpuCounterEventGpuCounter,
};
use perfetto_sdk_protos_gpu::protos::trace::trace_packet::prelude::*;
use utrace_format::COUNTER_NAMES;

use super::sequence::SequenceState;
use super::sequence_start::GPU_CLOCK_ID;
use super::stage_pairs::Range;
use crate::sink::{CounterValue, Counters, HardwareSet};
use ash::vk;

/// Each statistic's unit and group, in the order of [`COUNTER_NAMES`] (its counter id is
/// its place, from 1).
const KINDS: [(Unit, Group); COUNTER_NAMES.len()] = [
    (Unit::Vertex, Group::Vertices),
    (Unit::Primitive, Group::Primitives),
    (Unit::Vertex, Group::Vertices),
    (Unit::Primitive, Group::Primitives),
    (Unit::Primitive, Group::Primitives),
    (Unit::Fragment, Group::Fragments),
    (Unit::Instruction, Group::Compute),
    // Task and mesh shader invocations: workgroups' invocations, in the vertex stages'
    // place.
    (Unit::Instruction, Group::Vertices),
    (Unit::Instruction, Group::Vertices),
];

/// The counters a descriptor names without the mesh shading ones (task, mesh).
const WITHOUT_MESH: usize = 7;

/// The first hardware counter's id (the statistics take 1 to 9).
pub const HARDWARE_IDS: u32 = 101;

/// Sends the counters' descriptor for device `gpu_id` if this sequence state has not, or
/// sent it without the mesh shading counters that `counters` shows. Returns the bytes
/// sent (counted generously).
pub fn describe(
    ctx: &mut TraceContext<'_, SequenceState>,
    state: &mut SequenceState,
    gpu_id: u32,
    counters: &Counters,
) -> u64 {
    if let Some(set) = counters.hardware {
        return describe_hardware(ctx, state, gpu_id, set);
    }
    let named = if counters.mesh {
        COUNTER_NAMES.len()
    } else {
        WITHOUT_MESH
    };
    if state.counters_described >= named {
        return 0;
    }
    state.counters_described = named;
    ctx.add_packet(|packet: &mut TracePacket| {
        packet.set_sequence_flags(TracePacketSequenceFlags::SeqNeedsIncrementalState.into());
        packet.set_gpu_counter_event(|event: &mut GpuCounterEvent| {
            event.set_counter_descriptor(|d: &mut GpuCounterDescriptor| {
                let kinds = COUNTER_NAMES.iter().zip(KINDS).take(named);
                for (i, (name, (unit, group))) in kinds.enumerate() {
                    d.set_specs(|s: &mut Spec| {
                        s.set_counter_id(i as u32 + 1);
                        s.msg.append_type2_field(2, name.as_bytes());
                        s.set_numerator_units(unit);
                        s.set_select_by_default(true);
                        s.set_groups(group);
                    });
                }
            });
            event.set_gpu_id(gpu_id as i32);
        });
    });
    COUNTER_NAMES[..named]
        .iter()
        .map(|n| n.len() as u64 + 16)
        .sum()
}

/// [`describe`] for a set of hardware counters: their keys, and their units where
/// Perfetto has them.
fn describe_hardware(
    ctx: &mut TraceContext<'_, SequenceState>,
    state: &mut SequenceState,
    gpu_id: u32,
    set: &HardwareSet,
) -> u64 {
    let keys = &set.keys;
    if state.counters_described >= keys.len() {
        return 0;
    }
    state.counters_described = keys.len();
    ctx.add_packet(|packet: &mut TracePacket| {
        packet.set_sequence_flags(TracePacketSequenceFlags::SeqNeedsIncrementalState.into());
        packet.set_gpu_counter_event(|event: &mut GpuCounterEvent| {
            event.set_counter_descriptor(|d: &mut GpuCounterDescriptor| {
                for (i, key) in keys.iter().enumerate() {
                    let units = set.units.get(i).and_then(|&u| units_of(u));
                    d.set_specs(|s: &mut Spec| {
                        s.set_counter_id(HARDWARE_IDS + i as u32);
                        s.msg.append_type2_field(2, key.as_bytes());
                        if let Some((numerator, denominator)) = units {
                            s.set_numerator_units(numerator);
                            if let Some(denominator) = denominator {
                                s.set_denominator_units(denominator);
                            }
                        }
                        s.set_select_by_default(true);
                    });
                }
            });
            event.set_gpu_id(gpu_id as i32);
        });
    });
    keys.iter().map(|k| k.len() as u64 + 16).sum()
}

/// A Vulkan counter unit as Perfetto's (numerator, denominator), where it has one
/// (generic counts and cycles have none).
fn units_of(unit: vk::PerformanceCounterUnitKHR) -> Option<(Unit, Option<Unit>)> {
    use vk::PerformanceCounterUnitKHR as U;
    Some(match unit {
        U::PERCENTAGE => (Unit::Percent, None),
        U::NANOSECONDS => (Unit::Nanosecond, None),
        U::BYTES => (Unit::Byte, None),
        U::BYTES_PER_SECOND => (Unit::Byte, Some(Unit::Second)),
        U::KELVIN => (Unit::Kelvin, None),
        U::WATTS => (Unit::Watt, None),
        U::VOLTS => (Unit::Volt, None),
        U::AMPS => (Unit::Ampere, None),
        U::HERTZ => (Unit::Hertz, None),
        _ => return None,
    })
}

/// The id of counter `name` on the tracks, if it has one: a statistic's place (from 1), a
/// hardware counter's among its set's keys (from [`HARDWARE_IDS`]).
fn track_id(counters: &Counters, name: &str) -> Option<u32> {
    match counters.hardware {
        Some(set) => set
            .keys
            .iter()
            .position(|k| k == name)
            .map(|i| HARDWARE_IDS + i as u32),
        None => COUNTER_NAMES
            .iter()
            .position(|c| *c == name)
            .map(|i| i as u32 + 1),
    }
}

/// The counters `counters` shows, set at `ns` (its range's begin), or back to 0 (its
/// end, `zero`), on device `gpu_id`'s tracks. Returns the bytes sent (counted generously).
pub fn sample(
    ctx: &mut TraceContext<'_, SequenceState>,
    ns: u64,
    gpu_id: u32,
    counters: &Counters,
    zero: bool,
) -> u64 {
    let n = counters
        .shown()
        .filter(|(name, _)| track_id(counters, name).is_some())
        .count() as u64;
    ctx.add_packet(|packet: &mut TracePacket| {
        packet.set_timestamp(ns);
        packet.set_timestamp_clock_id(GPU_CLOCK_ID);
        packet.set_sequence_flags(TracePacketSequenceFlags::SeqNeedsIncrementalState.into());
        packet.set_gpu_counter_event(|event: &mut GpuCounterEvent| {
            for (name, value) in counters.shown() {
                let Some(id) = track_id(counters, name) else {
                    continue;
                };
                event.set_counters(|c: &mut GpuCounterEventGpuCounter| {
                    c.set_counter_id(id);
                    match value {
                        CounterValue::Real(v) => c.set_double_value(if zero { 0.0 } else { v }),
                        CounterValue::Count(v) => c.set_int_value(if zero { 0 } else { v as i64 }),
                        CounterValue::Signed(v) => c.set_int_value(if zero { 0 } else { v }),
                    };
                });
            }
            event.set_gpu_id(gpu_id as i32);
        });
    });
    32 + 16 * n
}

/// Whether `range`'s counters go on the counter tracks: measured, not a command buffer's
/// sum, and not a render pass whose draws went there already (`last_draw`: the begin of
/// the last draw that did).
pub fn innermost(last_draw: &mut Option<u64>, range: &Range<'_>, counters: &Counters) -> bool {
    if !counters.measured || counters.is_sum() {
        return false;
    }
    match range.begin.info().range {
        "render_pass" | "rendering" => last_draw.is_none_or(|draw| draw < range.begin.ns),
        "draw"
        | "draw_indexed"
        | "draw_indirect"
        | "draw_indirect_count"
        | "draw_multi"
        | "draw_mesh_tasks" => {
            *last_draw = Some(range.begin.ns);
            true
        }
        _ => true,
    }
}
