//! The protos a written trace is decoded with: prost messages of the fields the tests read,
//! field numbers from Perfetto's protos (trace_packet.proto, gpu_render_stage_event.proto,
//! vulkan_api_event.proto, clock_snapshot.proto, interned_data.proto, gpu_log.proto,
//! gpu_counter_event.proto, gpu_counter_descriptor.proto).

use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub struct Trace {
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

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
    /// Set by the tracing service on a sequence's first packet after packets were lost
    /// (a chunk of the producer's shared memory dropped, or overwritten in the ring).
    #[prost(bool, optional, tag = "42")]
    pub previous_packet_dropped: Option<bool>,
    #[prost(message, optional, tag = "6")]
    pub clock_snapshot: Option<ClockSnapshot>,
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    #[prost(message, optional, tag = "53")]
    pub gpu_render_stage_event: Option<GpuRenderStageEvent>,
    #[prost(message, optional, tag = "65")]
    pub vulkan_api_event: Option<VulkanApiEvent>,
    #[prost(message, optional, tag = "63")]
    pub gpu_log: Option<GpuLog>,
    #[prost(message, optional, tag = "52")]
    pub gpu_counter_event: Option<GpuCounterEvent>,
    #[prost(message, optional, tag = "128")]
    pub gpu_info: Option<GpuInfo>,
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// `track_descriptor.proto`, as far as a process's descriptor goes.
#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// `gpu_info.proto`: the layer's header, one GPU per device, its fields as `extra_info`.
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

/// gpu_counter_event.proto: a descriptor of the counters, or their values at the packet's
/// time.
#[derive(Clone, PartialEq, Message)]
pub struct GpuCounterEvent {
    #[prost(message, optional, tag = "1")]
    pub counter_descriptor: Option<GpuCounterDescriptor>,
    #[prost(message, repeated, tag = "2")]
    pub counters: Vec<GpuCounter>,
    #[prost(int32, optional, tag = "3")]
    pub gpu_id: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct GpuCounter {
    #[prost(uint32, optional, tag = "1")]
    pub counter_id: Option<u32>,
    #[prost(int64, optional, tag = "2")]
    pub int_value: Option<i64>,
    #[prost(double, optional, tag = "3")]
    pub double_value: Option<f64>,
}

/// gpu_counter_descriptor.proto: the counters' specs.
#[derive(Clone, PartialEq, Message)]
pub struct GpuCounterDescriptor {
    #[prost(message, repeated, tag = "1")]
    pub specs: Vec<GpuCounterSpec>,
}

#[derive(Clone, PartialEq, Message)]
pub struct GpuCounterSpec {
    #[prost(uint32, optional, tag = "1")]
    pub counter_id: Option<u32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "7")]
    pub numerator_units: Option<i32>,
}

/// gpu_log.proto: the layer's end record.
#[derive(Clone, PartialEq, Message)]
pub struct GpuLog {
    #[prost(int32, optional, tag = "1")]
    pub severity: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub tag: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub log_message: Option<String>,
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
    /// 2 = VULKAN.
    #[prost(int32, optional, tag = "3")]
    pub api: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InternedGpuRenderStageSpecification {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub description: Option<String>,
    /// 0 OTHER, 1 GRAPHICS, 2 COMPUTE.
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
