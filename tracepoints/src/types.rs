//! The fixed set of argument types a tracepoint may carry. Each maps to the Rust type the
//! `trace_*` function takes, the type stored in the payload, and the layer function that
//! prints it (`crate::trace::args::<printer>`). Anything else in the spec is an error.

/// How a value appears in structured output (JSON, CSV, Perfetto `extra_data`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// A number, written bare in JSON.
    Number,
    /// `true` / `false`.
    Bool,
    /// Text, quoted (and escaped) in JSON.
    Text,
    /// Already printed as a quoted, JSON-escaped string (labels).
    Quoted,
}

#[derive(Clone, Copy, Debug)]
pub struct ArgType {
    /// The name used in `tracepoints.toml`.
    pub name: &'static str,
    /// Parameter type of the generated `trace_*` function.
    pub param: &'static str,
    /// Field type in the payload struct.
    pub stored: &'static str,
    /// Printer in `crate::trace::args`, called as `printer(out, &value)` (labels also get
    /// the trace's string storage).
    pub printer: &'static str,
    pub kind: ValueKind,
    /// Whether the value is a label: stored out of line, bounded.
    pub is_label: bool,
}

const fn t(
    name: &'static str,
    param: &'static str,
    printer: &'static str,
    kind: ValueKind,
) -> ArgType {
    ArgType {
        name,
        param,
        stored: param,
        printer,
        kind,
        is_label: false,
    }
}

pub const TYPES: &[ArgType] = &[
    t("u32", "u32", "dec_u32", ValueKind::Number),
    t("u64", "u64", "dec_u64", ValueKind::Number),
    t("i32", "i32", "dec_i32", ValueKind::Number),
    t("bool", "bool", "boolean", ValueKind::Bool),
    t("hex", "u64", "hex", ValueKind::Text),
    t("size", "u64", "size", ValueKind::Text),
    t("handle", "u64", "hex", ValueKind::Text),
    t("format", "vk::Format", "format", ValueKind::Text),
    t(
        "cmd_buffer_level",
        "vk::CommandBufferLevel",
        "cmd_buffer_level",
        ValueKind::Text,
    ),
    t(
        "cmd_buffer_usage",
        "vk::CommandBufferUsageFlags",
        "cmd_buffer_usage",
        ValueKind::Text,
    ),
    t(
        "subpass_contents",
        "vk::SubpassContents",
        "subpass_contents",
        ValueKind::Text,
    ),
    t(
        "load_op",
        "vk::AttachmentLoadOp",
        "load_op",
        ValueKind::Text,
    ),
    t(
        "store_op",
        "vk::AttachmentStoreOp",
        "store_op",
        ValueKind::Text,
    ),
    t(
        "samples",
        "vk::SampleCountFlags",
        "samples",
        ValueKind::Number,
    ),
    t("filter", "vk::Filter", "filter", ValueKind::Text),
    t(
        "rendering_flags",
        "vk::RenderingFlags",
        "rendering_flags",
        ValueKind::Text,
    ),
    t(
        "pipeline_stages",
        "vk::PipelineStageFlags2",
        "pipeline_stages",
        ValueKind::Text,
    ),
    t(
        "dependency_flags",
        "vk::DependencyFlags",
        "dependency_flags",
        ValueKind::Text,
    ),
    t(
        "image_aspects",
        "vk::ImageAspectFlags",
        "image_aspects",
        ValueKind::Text,
    ),
    t("query_type", "vk::QueryType", "query_type", ValueKind::Text),
    t("name", "&'static str", "name", ValueKind::Text),
    ArgType {
        name: "label",
        param: "impl LabelInput",
        stored: "LabelRef",
        printer: "label",
        kind: ValueKind::Quoted,
        is_label: true,
    },
];

pub fn lookup(name: &str) -> Option<&'static ArgType> {
    TYPES.iter().find(|t| t.name == name)
}

/// The type names, for error messages.
pub fn names() -> String {
    TYPES.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
}
