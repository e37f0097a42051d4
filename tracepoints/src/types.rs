//! The fixed set of argument types a tracepoint may carry. Each maps to the Rust type the
//! `trace_*` function takes, the type stored in the payload, and the layer function that
//! prints it (`crate::trace::args::<printer>`). Anything else in the spec is an error.

/// How a value appears in structured output: the format crate's, which the layer and the
/// command name too.
pub use utrace_format::ValueKind;

/// How a value is kept in a trace's argument words (`u32`s, so that a recorded event takes
/// only the room its own arguments need).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repr {
    /// A `u32`, as it is.
    U32,
    /// An `i32`, its bits.
    I32,
    /// 0 or 1.
    Bool,
    /// A `u64`, low word first.
    U64,
    /// A Vulkan enum (`as_raw()` is an `i32`).
    VkEnum,
    /// Vulkan flags of 32 bits (`as_raw()` is a `u32`).
    VkFlags,
    /// Vulkan flags of 64 bits, low word first.
    VkFlags64,
    /// Text kept in the trace's string storage: offset, then length.
    Text,
}

impl Repr {
    pub fn words(self) -> usize {
        match self {
            Repr::U64 | Repr::VkFlags64 | Repr::Text => 2,
            _ => 1,
        }
    }
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
    /// Whether the value is a label (a named stage): printed quoted.
    pub is_label: bool,
    /// Kept in the trace's string storage (labels and names): the `trace_*` function copies
    /// it there and the payload holds a `LabelRef`.
    pub out_of_line: bool,
    pub repr: Repr,
}

const fn t(
    name: &'static str,
    param: &'static str,
    printer: &'static str,
    kind: ValueKind,
    repr: Repr,
) -> ArgType {
    ArgType {
        name,
        param,
        stored: param,
        printer,
        kind,
        is_label: false,
        out_of_line: false,
        repr,
    }
}

pub const TYPES: &[ArgType] = &[
    t("u32", "u32", "dec_u32", ValueKind::Number, Repr::U32),
    t("u64", "u64", "dec_u64", ValueKind::Number, Repr::U64),
    t("i32", "i32", "dec_i32", ValueKind::Number, Repr::I32),
    t("bool", "bool", "boolean", ValueKind::Bool, Repr::Bool),
    t("hex", "u64", "hex", ValueKind::Text, Repr::U64),
    t("size", "u64", "size", ValueKind::Text, Repr::U64),
    t("handle", "u64", "hex", ValueKind::Text, Repr::U64),
    // The pipeline bound when the command was recorded: a handle, which the outputs follow
    // with the name the application gave it (`Payload::pipeline`).
    t("pipeline", "u64", "hex", ValueKind::Text, Repr::U64),
    t(
        "format",
        "vk::Format",
        "format",
        ValueKind::Text,
        Repr::VkEnum,
    ),
    t(
        "cmd_buffer_level",
        "vk::CommandBufferLevel",
        "cmd_buffer_level",
        ValueKind::Text,
        Repr::VkEnum,
    ),
    t(
        "cmd_buffer_usage",
        "vk::CommandBufferUsageFlags",
        "cmd_buffer_usage",
        ValueKind::Text,
        Repr::VkFlags,
    ),
    t(
        "subpass_contents",
        "vk::SubpassContents",
        "subpass_contents",
        ValueKind::Text,
        Repr::VkEnum,
    ),
    t(
        "load_op",
        "vk::AttachmentLoadOp",
        "load_op",
        ValueKind::Text,
        Repr::VkEnum,
    ),
    t(
        "store_op",
        "vk::AttachmentStoreOp",
        "store_op",
        ValueKind::Text,
        Repr::VkEnum,
    ),
    t(
        "samples",
        "vk::SampleCountFlags",
        "samples",
        ValueKind::Number,
        Repr::VkFlags,
    ),
    t(
        "filter",
        "vk::Filter",
        "filter",
        ValueKind::Text,
        Repr::VkEnum,
    ),
    t(
        "rendering_flags",
        "vk::RenderingFlags",
        "rendering_flags",
        ValueKind::Text,
        Repr::VkFlags,
    ),
    t(
        "pipeline_stages",
        "vk::PipelineStageFlags2",
        "pipeline_stages",
        ValueKind::Text,
        Repr::VkFlags64,
    ),
    t(
        "dependency_flags",
        "vk::DependencyFlags",
        "dependency_flags",
        ValueKind::Text,
        Repr::VkFlags,
    ),
    t(
        "image_aspects",
        "vk::ImageAspectFlags",
        "image_aspects",
        ValueKind::Text,
        Repr::VkFlags,
    ),
    t(
        "query_type",
        "vk::QueryType",
        "query_type",
        ValueKind::Text,
        Repr::VkEnum,
    ),
    // A count, or `indirect` where the device reads it at execution (u64::MAX).
    t("count", "u64", "count", ValueKind::Number, Repr::U64),
    t(
        "acceleration_structure_type",
        "vk::AccelerationStructureTypeKHR",
        "acceleration_structure_type",
        ValueKind::Text,
        Repr::VkEnum,
    ),
    t(
        "build_mode",
        "vk::BuildAccelerationStructureModeKHR",
        "build_mode",
        ValueKind::Text,
        Repr::VkEnum,
    ),
    t(
        "build_flags",
        "vk::BuildAccelerationStructureFlagsKHR",
        "build_flags",
        ValueKind::Text,
        Repr::VkFlags,
    ),
    t(
        "copy_mode",
        "vk::CopyAccelerationStructureModeKHR",
        "copy_mode",
        ValueKind::Text,
        Repr::VkEnum,
    ),
    ArgType {
        name: "name",
        param: "&'static str",
        stored: "LabelRef",
        printer: "name",
        kind: ValueKind::Text,
        is_label: false,
        out_of_line: true,
        repr: Repr::Text,
    },
    ArgType {
        name: "label",
        param: "impl LabelInput",
        stored: "LabelRef",
        printer: "label",
        kind: ValueKind::Quoted,
        is_label: true,
        out_of_line: true,
        repr: Repr::Text,
    },
];

pub fn lookup(name: &str) -> Option<&'static ArgType> {
    TYPES.iter().find(|t| t.name == name)
}

/// The type names, for error messages.
pub fn names() -> String {
    TYPES.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
}
