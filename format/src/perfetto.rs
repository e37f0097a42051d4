//! The few Perfetto messages utrace reads and writes, as prost types with the field numbers
//! of Perfetto's protos (`trace_packet.proto`, `gpu_render_stage_event.proto`,
//! `vulkan_api_event.proto`, `clock_snapshot.proto`). A trace file is a `Trace`: its
//! packets, each field 1, length-delimited; fields not listed here are skipped on reading.
//! The layer writes the same messages (through Perfetto's SDK) and the command decodes and
//! writes them with these; the tests crate has its own copy (`tests/src/perfetto_trace.rs`),
//! so that neither side checks itself.

use prost::Message;

/// `Trace.packet`: every packet of a trace file is this field.
pub const TRACE_PACKET_FIELD: u32 = 1;
/// `TracePacket.sequence_flags`.
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;
/// `BuiltinClock.BUILTIN_CLOCK_BOOTTIME`, Perfetto's default trace clock.
pub const CLOCK_BOOTTIME: u32 = 6;
/// `InternedGraphicsContext.Api.VULKAN`.
pub const API_VULKAN: i32 = 2;
/// `InternedGpuRenderStageSpecification.RenderStageCategory`.
pub const CATEGORY_OTHER: i32 = 0;
pub const CATEGORY_GRAPHICS: i32 = 1;
pub const CATEGORY_COMPUTE: i32 = 2;

#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(message, optional, tag = "6")]
    pub clock_snapshot: Option<ClockSnapshot>,
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    #[prost(message, optional, tag = "53")]
    pub gpu_render_stage_event: Option<GpuRenderStageEvent>,
    #[prost(message, optional, tag = "65")]
    pub vulkan_api_event: Option<VulkanApiEvent>,
    #[prost(message, optional, tag = "128")]
    pub gpu_info: Option<GpuInfo>,
}

/// `TracePacket.gpu_info` (`gpu_info.proto`): utrace writes one GPU per device, its
/// header's fields (`crate::header`) as `extra_info`, the device's index under `device`.
#[derive(Clone, PartialEq, Message)]
pub struct GpuInfo {
    #[prost(message, repeated, tag = "1")]
    pub gpus: Vec<Gpu>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Gpu {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub vendor: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub model: Option<String>,
    #[prost(message, repeated, tag = "6")]
    pub extra_info: Vec<GpuKeyValue>,
}

#[derive(Clone, PartialEq, Message)]
pub struct GpuKeyValue {
    #[prost(string, optional, tag = "1")]
    pub key: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub value: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ClockSnapshot {
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<Clock>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Clock {
    #[prost(uint32, optional, tag = "1")]
    pub clock_id: Option<u32>,
    #[prost(uint64, optional, tag = "2")]
    pub timestamp: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InternedData {
    #[prost(message, repeated, tag = "23")]
    pub graphics_contexts: Vec<InternedGraphicsContext>,
    #[prost(message, repeated, tag = "24")]
    pub gpu_specifications: Vec<InternedGpuRenderStageSpecification>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InternedGraphicsContext {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub api: Option<i32>,
}

/// A stage's or a hardware queue's name (they share the table of iids).
#[derive(Clone, PartialEq, Message)]
pub struct InternedGpuRenderStageSpecification {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub description: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub category: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct GpuRenderStageEvent {
    #[prost(uint64, optional, tag = "1")]
    pub event_id: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub duration: Option<u64>,
    #[prost(uint64, optional, tag = "5")]
    pub context: Option<u64>,
    #[prost(message, repeated, tag = "6")]
    pub extra_data: Vec<ExtraData>,
    #[prost(uint64, optional, tag = "8")]
    pub render_target_handle: Option<u64>,
    #[prost(uint64, optional, tag = "9")]
    pub render_pass_handle: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub submission_id: Option<u32>,
    #[prost(int32, optional, tag = "11")]
    pub gpu_id: Option<i32>,
    #[prost(uint64, optional, tag = "12")]
    pub command_buffer_handle: Option<u64>,
    #[prost(uint64, optional, tag = "13")]
    pub hw_queue_iid: Option<u64>,
    #[prost(uint64, optional, tag = "14")]
    pub stage_iid: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ExtraData {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub value: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct VulkanApiEvent {
    #[prost(message, optional, tag = "1")]
    pub vk_debug_utils_object_name: Option<VkDebugUtilsObjectName>,
    #[prost(message, optional, tag = "2")]
    pub vk_queue_submit: Option<VkQueueSubmit>,
}

#[derive(Clone, PartialEq, Message)]
pub struct VkDebugUtilsObjectName {
    #[prost(uint32, optional, tag = "1")]
    pub pid: Option<u32>,
    #[prost(uint64, optional, tag = "2")]
    pub vk_device: Option<u64>,
    #[prost(int32, optional, tag = "3")]
    pub object_type: Option<i32>,
    #[prost(uint64, optional, tag = "4")]
    pub object: Option<u64>,
    #[prost(string, optional, tag = "5")]
    pub object_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct VkQueueSubmit {
    #[prost(uint64, optional, tag = "1")]
    pub duration_ns: Option<u64>,
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    #[prost(uint32, optional, tag = "3")]
    pub tid: Option<u32>,
    #[prost(uint64, optional, tag = "4")]
    pub vk_queue: Option<u64>,
    #[prost(uint64, repeated, packed = "false", tag = "5")]
    pub vk_command_buffers: Vec<u64>,
    #[prost(uint32, optional, tag = "6")]
    pub submission_id: Option<u32>,
}

/// Appends `packet` to `out` as one `Trace.packet` field.
pub fn encode_packet(packet: &TracePacket, out: &mut Vec<u8>) {
    prost::encoding::encode_key(
        TRACE_PACKET_FIELD,
        prost::encoding::WireType::LengthDelimited,
        out,
    );
    // Writing into a Vec cannot run out of room.
    let _ = packet.encode_length_delimited(out);
}
