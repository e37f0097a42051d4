//! Printers for tracepoint arguments, one per argument type of the spec (named by
//! `tracepoints/src/types.rs`). They append to a `String` the traceq thread reuses, so
//! printing allocates nothing. Enum and flag names are Vulkan's, in lower case.

use std::fmt::{self, Write};

use ash::vk;
use utrace_format::escape::push_quoted;

use super::tracepoint::LabelRef;
use crate::digits;

pub fn dec_u32(out: &mut String, v: &u32) {
    digits::push_u64(out, u64::from(*v));
}

pub fn dec_u64(out: &mut String, v: &u64) {
    digits::push_u64(out, *v);
}

pub fn dec_i32(out: &mut String, v: &i32) {
    digits::push_i64(out, i64::from(*v));
}

pub fn boolean(out: &mut String, v: &bool) {
    out.push_str(if *v { "true" } else { "false" });
}

/// A fixed name chosen by the layer (an operation's kind), written as it is.
pub fn name(out: &mut String, v: &LabelRef, strings: &[u8]) {
    out.push_str(&String::from_utf8_lossy(v.bytes(strings)));
}

/// A byte count, or `whole` for `VK_WHOLE_SIZE`.
pub fn size(out: &mut String, v: &u64) {
    if *v == vk::WHOLE_SIZE {
        out.push_str("whole");
    } else {
        digits::push_u64(out, *v);
    }
}

pub fn hex(out: &mut String, v: &u64) {
    digits::push_hex(out, *v);
}

/// Formats keep Vulkan's spelling (`R8G8B8A8_UNORM`), as every graphics tool shows them.
pub fn format(out: &mut String, v: &vk::Format) {
    let _ = write!(out, "{v:?}");
}

pub fn cmd_buffer_level(out: &mut String, v: &vk::CommandBufferLevel) {
    lower_debug(out, v, "");
}

pub fn cmd_buffer_usage(out: &mut String, v: &vk::CommandBufferUsageFlags) {
    lower_debug(out, v, "none");
}

pub fn subpass_contents(out: &mut String, v: &vk::SubpassContents) {
    lower_debug(out, v, "");
}

pub fn load_op(out: &mut String, v: &vk::AttachmentLoadOp) {
    lower_debug(out, v, "");
}

pub fn store_op(out: &mut String, v: &vk::AttachmentStoreOp) {
    lower_debug(out, v, "");
}

/// Sample counts as numbers: `SampleCountFlags::TYPE_4` is 4.
pub fn samples(out: &mut String, v: &vk::SampleCountFlags) {
    digits::push_u64(out, u64::from(v.as_raw()));
}

pub fn filter(out: &mut String, v: &vk::Filter) {
    lower_debug(out, v, "");
}

pub fn rendering_flags(out: &mut String, v: &vk::RenderingFlags) {
    lower_debug(out, v, "none");
}

pub fn pipeline_stages(out: &mut String, v: &vk::PipelineStageFlags2) {
    lower_debug(out, v, "none");
}

pub fn dependency_flags(out: &mut String, v: &vk::DependencyFlags) {
    lower_debug(out, v, "none");
}

pub fn image_aspects(out: &mut String, v: &vk::ImageAspectFlags) {
    lower_debug(out, v, "none");
}

pub fn query_type(out: &mut String, v: &vk::QueryType) {
    lower_debug(out, v, "");
}

/// A count, or `indirect` for one the device reads when the command executes (`u64::MAX`,
/// see [`INDIRECT`]).
pub fn count(out: &mut String, v: &u64) {
    if *v == INDIRECT {
        out.push_str("indirect");
    } else {
        digits::push_u64(out, *v);
    }
}

/// The value of a `count` the recording does not know.
pub const INDIRECT: u64 = u64::MAX;

/// `top_level`, `bottom_level`, `generic`.
pub fn acceleration_structure_type(out: &mut String, v: &vk::AccelerationStructureTypeKHR) {
    lower_debug(out, v, "");
}

/// `build` or `update`.
pub fn build_mode(out: &mut String, v: &vk::BuildAccelerationStructureModeKHR) {
    lower_debug(out, v, "");
}

/// `allow_compaction|prefer_fast_trace`, ... (in bit order)
pub fn build_flags(out: &mut String, v: &vk::BuildAccelerationStructureFlagsKHR) {
    lower_debug(out, v, "none");
}

/// `clone`, `compact`, `serialize`, `deserialize`.
pub fn copy_mode(out: &mut String, v: &vk::CopyAccelerationStructureModeKHR) {
    lower_debug(out, v, "");
}

/// A label, quoted, with `"` and `\` escaped and control characters written as `\uXXXX`
/// (so that the printed label is also a valid JSON string); bytes that are not UTF-8
/// become U+FFFD. Object names are shown so too ([`push_quoted`]).
pub fn label(out: &mut String, v: &LabelRef, strings: &[u8]) {
    push_quoted(out, v.bytes(strings));
}

/// Writes `v`'s Debug form (ash prints Vulkan's names, flags joined by ` | `) lower-cased
/// with the spaces dropped; `empty` stands for an empty set of flags.
fn lower_debug(out: &mut String, v: &impl fmt::Debug, empty: &str) {
    struct Lower<'a>(&'a mut String);
    impl Write for Lower<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.0.extend(
                s.chars()
                    .filter(|&c| c != ' ')
                    .map(|c| c.to_ascii_lowercase()),
            );
            Ok(())
        }
    }
    let start = out.len();
    let _ = write!(Lower(out), "{v:?}");
    if out.len() == start {
        out.push_str(empty);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p<T>(f: fn(&mut String, &T), v: T) -> String {
        let mut s = String::new();
        f(&mut s, &v);
        s
    }

    #[test]
    fn names_are_vulkans_in_lower_case() {
        assert_eq!(
            p(cmd_buffer_level, vk::CommandBufferLevel::SECONDARY),
            "secondary"
        );
        assert_eq!(
            p(
                cmd_buffer_usage,
                vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT
                    | vk::CommandBufferUsageFlags::SIMULTANEOUS_USE
            ),
            "one_time_submit|simultaneous_use"
        );
        assert_eq!(
            p(cmd_buffer_usage, vk::CommandBufferUsageFlags::empty()),
            "none"
        );
        assert_eq!(p(load_op, vk::AttachmentLoadOp::DONT_CARE), "dont_care");
        assert_eq!(p(format, vk::Format::R8G8B8A8_UNORM), "R8G8B8A8_UNORM");
        assert_eq!(p(samples, vk::SampleCountFlags::TYPE_4), "4");
        assert_eq!(p(hex, 255u64), "0xff");
        // An unknown enum value prints as its number.
        assert_eq!(p(filter, vk::Filter::from_raw(77)), "77");
    }

    #[test]
    fn acceleration_structure_arguments_read_as_vulkan_names() {
        type T = vk::AccelerationStructureTypeKHR;
        assert_eq!(p(acceleration_structure_type, T::TOP_LEVEL), "top_level");
        assert_eq!(
            p(acceleration_structure_type, T::BOTTOM_LEVEL),
            "bottom_level"
        );
        assert_eq!(
            p(build_mode, vk::BuildAccelerationStructureModeKHR::UPDATE),
            "update"
        );
        type F = vk::BuildAccelerationStructureFlagsKHR;
        assert_eq!(
            p(build_flags, F::PREFER_FAST_TRACE | F::ALLOW_COMPACTION),
            "allow_compaction|prefer_fast_trace"
        );
        assert_eq!(p(build_flags, F::empty()), "none");
        assert_eq!(
            p(copy_mode, vk::CopyAccelerationStructureModeKHR::COMPACT),
            "compact"
        );
        assert_eq!(p(count, 12u64), "12");
        assert_eq!(p(count, INDIRECT), "indirect");
    }

    #[test]
    fn labels_are_quoted_escaped_and_survive_bad_utf8() {
        let strings = b"say \"hi\"\\\n\x01\xff\xfeok";
        let all = LabelRef {
            offset: 0,
            len: strings.len() as u32,
        };
        let mut s = String::new();
        label(&mut s, &all, strings);
        assert_eq!(s, "\"say \\\"hi\\\"\\\\\\n\\u0001\u{fffd}\u{fffd}ok\"");
        let out_of_range = LabelRef {
            offset: 100,
            len: 4,
        };
        let mut s = String::new();
        label(&mut s, &out_of_range, strings);
        assert_eq!(s, "\"\"");
    }
}
