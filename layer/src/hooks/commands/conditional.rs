//! Conditional rendering (VK_EXT_conditional_rendering): a range from
//! `vkCmdBeginConditionalRenderingEXT` to its end, around the draws and dispatches the
//! predicate may skip. The timestamps themselves are never skipped: conditional rendering
//! applies to draws, dispatches and clears only.

use ash::vk;
use ash::vk::Handle;

use super::bracketed;
use crate::trace::tracepoints::*;

bracketed! {
    /// `vkCmdBeginConditionalRenderingEXT`.
    cmd_begin_conditional_rendering(cb, p_begin: *const vk::ConditionalRenderingBeginInfoEXT<'_>) = ext cmd_begin_conditional_rendering;
    switch toggle::CONDITIONAL_RENDERING;
    before |r, t| {
        // SAFETY: a valid begin info.
        let begin = unsafe { &*p_begin };
        let inverted = begin.flags.contains(vk::ConditionalRenderingFlagsEXT::INVERTED);
        trace_start_conditional_rendering(r, t, inverted, begin.buffer.as_raw(), begin.offset)
    };
    after |r, t| {};
}

bracketed! {
    /// `vkCmdEndConditionalRenderingEXT`.
    cmd_end_conditional_rendering(cb) = ext cmd_end_conditional_rendering;
    switch toggle::CONDITIONAL_RENDERING;
    before |r, t| {};
    after |r, t| trace_end_conditional_rendering(r, t);
}
