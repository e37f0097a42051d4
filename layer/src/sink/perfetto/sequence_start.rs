//! What every sequence is told of the device before its stages: the graphics context, the
//! trace's header as the device's `gpu_info` (its fields as `extra_info`), a clock snapshot
//! pairing the device's clock with `CLOCK_BOOTTIME` (repeated every [`SNAPSHOT_PERIOD`]),
//! and the application's object names not yet sent.

use std::sync::Arc;
use std::time::{Duration, Instant};

use perfetto_sdk::data_source::TraceContext;
use perfetto_sdk::protos::trace::clock_snapshot::{ClockSnapshot, ClockSnapshotClock};
use perfetto_sdk::protos::trace::interned_data::interned_data::InternedData;
use perfetto_sdk::protos::trace::trace_packet::{TracePacket, TracePacketSequenceFlags};
use perfetto_sdk::protos::trace::track_event::process_descriptor::ProcessDescriptor;
use perfetto_sdk::protos::trace::track_event::track_descriptor::TrackDescriptor;
use perfetto_sdk_protos_gpu::protos::trace::gpu::gpu_render_stage_event::{
    InternedGraphicsContext, InternedGraphicsContextApi,
};
use perfetto_sdk_protos_gpu::protos::trace::gpu::vulkan_api_event::{
    VulkanApiEvent, VulkanApiEventVkDebugUtilsObjectName,
};
use perfetto_sdk_protos_gpu::protos::trace::interned_data::interned_data::prelude::*;
use perfetto_sdk_protos_gpu::protos::trace::system_info::gpu_info::{
    GpuInfo, GpuInfoGpu, GpuInfoGpuKeyValue,
};
use perfetto_sdk_protos_gpu::protos::trace::trace_packet::prelude::*;

use super::sequence::SequenceState;
use crate::gpu::calibration::GpuClock;
use crate::sink::origin::Origin;
use crate::sink::{DeviceContext, ObjectNames};
use crate::trace::shader_sets::SHADER_SET_OBJECT_TYPE;

/// The device clock's id: sequence-scoped (64..127), as each sequence is one device's.
pub const GPU_CLOCK_ID: u32 = 64;
pub const BOOTTIME_CLOCK_ID: u32 = 6;
/// The interned graphics context's iid (one per sequence, which is one device's).
pub const CONTEXT_IID: u64 = 1;
pub const SNAPSHOT_PERIOD: Duration = Duration::from_secs(1);

/// The device as its sequences name it, and what it tells each of them first.
pub struct DeviceHeader {
    pub device: u32,
    device_handle: u64,
    clock: Option<GpuClock>,
    pub pid: u32,
    pub names: ObjectNames,
    origin: Arc<Origin>,
    warned: bool,
}

impl DeviceHeader {
    pub fn new(device: DeviceContext, origin: Arc<Origin>) -> DeviceHeader {
        DeviceHeader {
            device: device.index,
            device_handle: device.handle,
            clock: device.clock,
            pid: std::process::id(),
            names: device.names,
            origin,
            warned: false,
        }
    }

    /// The trace's header as a `gpu_info` packet: the device named as Perfetto's UI shows
    /// GPUs, every field of the header (and the device's index) as `extra_info`; and the
    /// process's descriptor (its pid and name), which Perfetto's UI shows on its tracks.
    fn send_origin(&self, ctx: &mut TraceContext<'_, SequenceState>) {
        let fields = self.origin.fields("perfetto", self.clock.as_ref());
        let device = self.device.to_string();
        let name = fields
            .iter()
            .find(|(k, _)| *k == "process")
            .map(|(_, v)| v.plain())
            .unwrap_or_default();
        let pid = self.pid;
        ctx.add_packet(|packet: &mut TracePacket| {
            packet.set_track_descriptor(|track: &mut TrackDescriptor| {
                // The uuid Perfetto's SDK gives a process track: its pid.
                track.set_uuid(u64::from(pid));
                track.set_process(|p: &mut ProcessDescriptor| {
                    p.set_pid(pid as i32);
                    p.set_process_name(name.as_str());
                });
            });
        });
        ctx.add_packet(|packet: &mut TracePacket| {
            packet.set_gpu_info(|info: &mut GpuInfo| {
                info.set_gpus(|gpu: &mut GpuInfoGpu| {
                    gpu.set_name(self.origin.device_name.as_str());
                    gpu.set_vendor(format!("{:#x}", self.origin.vendor_id));
                    gpu.set_model(self.origin.driver_info.as_str());
                    gpu.set_extra_info(|kv: &mut GpuInfoGpuKeyValue| {
                        kv.set_key("device");
                        kv.set_value(device.as_str());
                    });
                    for (key, value) in &fields {
                        gpu.set_extra_info(|kv: &mut GpuInfoGpuKeyValue| {
                            kv.set_key(*key);
                            kv.set_value(value.plain());
                        });
                    }
                });
            });
        });
    }

    /// `"; GPU clock measured to within N ns"` where the clock was measured (no calibrated
    /// timestamps): how far the stages may be from their true place on the timeline.
    pub fn clock_note(&self) -> Option<String> {
        let within = self.clock.as_ref()?.measured_within_ns()?;
        Some(format!("; GPU clock measured to within {within} ns"))
    }

    /// What a sequence needs before its first event: the context and a clock snapshot
    /// (again after a clear, and every [`SNAPSHOT_PERIOD`]).
    pub fn start(&mut self, ctx: &mut TraceContext<'_, SequenceState>, state: &mut SequenceState) {
        if state.cleared {
            let pid = self.pid as i32;
            ctx.add_packet(|packet: &mut TracePacket| {
                packet.set_sequence_flags(
                    TracePacketSequenceFlags::SeqIncrementalStateCleared as u32
                        | TracePacketSequenceFlags::SeqNeedsIncrementalState as u32,
                );
                packet.set_interned_data(|data: &mut InternedData| {
                    data.set_graphics_contexts(|c: &mut InternedGraphicsContext| {
                        c.set_iid(CONTEXT_IID);
                        c.set_pid(pid);
                        c.set_api(InternedGraphicsContextApi::Vulkan);
                    });
                });
            });
            self.send_origin(ctx);
            state.cleared = false;
        }
        if state
            .last_snapshot
            .is_some_and(|t| t.elapsed() < SNAPSHOT_PERIOD)
        {
            return;
        }
        let Some(pair) = self.clock.as_ref().and_then(GpuClock::sample) else {
            if !self.warned {
                log::warn!(
                    "device {}: the GPU clock could not be paired with the CPU's; its Perfetto events cannot be placed on the timeline",
                    self.device
                );
                self.warned = true;
            }
            return;
        };
        ctx.add_packet(|packet: &mut TracePacket| {
            packet.set_timestamp(pair.boottime_ns);
            packet.set_timestamp_clock_id(BOOTTIME_CLOCK_ID);
            packet.set_clock_snapshot(|cs: &mut ClockSnapshot| {
                cs.set_clocks(|c: &mut ClockSnapshotClock| {
                    c.set_clock_id(BOOTTIME_CLOCK_ID);
                    c.set_timestamp(pair.boottime_ns);
                });
                cs.set_clocks(|c: &mut ClockSnapshotClock| {
                    c.set_clock_id(GPU_CLOCK_ID);
                    c.set_timestamp(pair.gpu_ns);
                });
            });
        });
        state.last_snapshot = Some(Instant::now());
    }

    pub fn send_names(&self, ctx: &mut TraceContext<'_, SequenceState>, state: &mut SequenceState) {
        let names = self.names.lock();
        if state.names_sent >= names.len() {
            return;
        }
        // The layer's own entries (shader sets, see `trace::shader_sets`) are no Vulkan
        // object's names.
        for n in names[state.names_sent..]
            .iter()
            .filter(|n| n.object_type != SHADER_SET_OBJECT_TYPE)
        {
            let (pid, device) = (self.pid, self.device_handle);
            ctx.add_packet(|packet: &mut TracePacket| {
                packet.set_timestamp(n.named_at_ns);
                packet.set_timestamp_clock_id(BOOTTIME_CLOCK_ID);
                packet.set_vulkan_api_event(|api: &mut VulkanApiEvent| {
                    api.set_vk_debug_utils_object_name(
                        |o: &mut VulkanApiEventVkDebugUtilsObjectName| {
                            o.set_pid(pid);
                            o.set_vk_device(device);
                            o.set_object_type(n.object_type);
                            o.set_object(n.object);
                            o.msg.append_type2_field(5, n.name.as_bytes());
                        },
                    );
                });
            });
        }
        state.names_sent = names.len();
    }
}
