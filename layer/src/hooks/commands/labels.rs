//! The application's own markers: `VK_EXT_debug_utils` labels and `VK_EXT_debug_marker`
//! markers become `label` ranges named by their text, inserts become `insert_label` markers.
//! Names are copied with a bound (see `MAX_LABEL`); they may be any bytes.

use std::ffi::{c_char, CStr};

use ash::vk;

use super::bracketed;
use crate::trace::record::recorder::Recorder;
use crate::trace::tracepoints::CommandTrace;
use crate::trace::tracepoints::*;

/// The bytes of an application's label (empty for a null pointer).
///
/// # Safety
/// A non-null `name` must be NUL-terminated.
unsafe fn name<'a>(name: *const c_char) -> &'a [u8] {
    if name.is_null() {
        &[]
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { CStr::from_ptr(name) }.to_bytes()
    }
}

/// Opens a label; its name is kept for the `end_label` that closes it in this recording.
fn begin(r: &Recorder<'_>, t: &mut CommandTrace, label: &[u8]) {
    let stored = t.store_label(label);
    t.push_label(stored);
    trace_begin_label(r, t, stored);
}

fn end(r: &Recorder<'_>, t: &mut CommandTrace) {
    let open = t.pop_label();
    trace_end_label(r, t, open);
}

bracketed! {
    /// `vkCmdBeginDebugUtilsLabelEXT`.
    cmd_begin_debug_utils_label(cb, p_label: *const vk::DebugUtilsLabelEXT<'_>) = ext cmd_begin_debug_utils_label;
    before |r, t| {};
    // SAFETY: a valid label info with a NUL-terminated name.
    after |r, t| begin(r, t, unsafe { name((*p_label).p_label_name) });
}

bracketed! {
    /// `vkCmdEndDebugUtilsLabelEXT`.
    cmd_end_debug_utils_label(cb) = ext cmd_end_debug_utils_label;
    before |r, t| end(r, t);
    after |r, t| {};
}

bracketed! {
    /// `vkCmdInsertDebugUtilsLabelEXT`.
    cmd_insert_debug_utils_label(cb, p_label: *const vk::DebugUtilsLabelEXT<'_>) = ext cmd_insert_debug_utils_label;
    // SAFETY: a valid label info with a NUL-terminated name.
    before |r, t| trace_insert_label(r, t, unsafe { name((*p_label).p_label_name) });
    after |r, t| {};
}

bracketed! {
    /// `vkCmdDebugMarkerBeginEXT`.
    cmd_debug_marker_begin(cb, p_marker: *const vk::DebugMarkerMarkerInfoEXT<'_>) = ext cmd_debug_marker_begin;
    before |r, t| {};
    // SAFETY: a valid marker info with a NUL-terminated name.
    after |r, t| begin(r, t, unsafe { name((*p_marker).p_marker_name) });
}

bracketed! {
    /// `vkCmdDebugMarkerEndEXT`.
    cmd_debug_marker_end(cb) = ext cmd_debug_marker_end;
    before |r, t| end(r, t);
    after |r, t| {};
}

bracketed! {
    /// `vkCmdDebugMarkerInsertEXT`.
    cmd_debug_marker_insert(cb, p_marker: *const vk::DebugMarkerMarkerInfoEXT<'_>) = ext cmd_debug_marker_insert;
    // SAFETY: a valid marker info with a NUL-terminated name.
    before |r, t| trace_insert_label(r, t, unsafe { name((*p_marker).p_marker_name) });
    after |r, t| {};
}
