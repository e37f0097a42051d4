//! The tracepoints, their payloads and printers.
//!
//! Written by hand while there are two of them; the spec-driven generator
//! (`tracepoints/tracepoints.toml`) replaces this file. Hooks call the `trace_*` functions;
//! nothing else knows a payload's layout.

use std::fmt::Write;

use ash::vk;

use super::command_trace::{CommandTrace, Recorder};

/// Whether a tracepoint opens or closes a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeKind {
    Begin,
    End,
}

pub struct TracepointInfo {
    pub name: &'static str,
    pub kind: RangeKind,
    /// Written at the bottom of the pipe (after the work before it), else at the top.
    pub end_of_pipe: bool,
}

pub static START_CMD_BUFFER: TracepointInfo = TracepointInfo {
    name: "start_cmd_buffer",
    kind: RangeKind::Begin,
    end_of_pipe: false,
};

pub static END_CMD_BUFFER: TracepointInfo = TracepointInfo {
    name: "end_cmd_buffer",
    kind: RangeKind::End,
    end_of_pipe: true,
};

/// The arguments recorded with a tracepoint. Plain data: copied into the command trace at
/// record time, printed by the traceq thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    StartCmdBuffer {
        cmd: u64,
        level: vk::CommandBufferLevel,
        usage: vk::CommandBufferUsageFlags,
    },
    EndCmdBuffer {
        cmd: u64,
    },
}

impl Payload {
    pub fn info(&self) -> &'static TracepointInfo {
        match self {
            Payload::StartCmdBuffer { .. } => &START_CMD_BUFFER,
            Payload::EndCmdBuffer { .. } => &END_CMD_BUFFER,
        }
    }

    /// Writes `arg=value, ...` (nothing for a tracepoint without arguments).
    pub fn write_args(&self, out: &mut String) {
        match *self {
            Payload::StartCmdBuffer { cmd, level, usage } => {
                let _ = write!(out, "cmd={cmd:#x}, level={}, usage=", level_name(level));
                write_usage(out, usage);
            }
            Payload::EndCmdBuffer { cmd } => {
                let _ = write!(out, "cmd={cmd:#x}");
            }
        }
    }
}

fn level_name(level: vk::CommandBufferLevel) -> &'static str {
    if level == vk::CommandBufferLevel::SECONDARY {
        "secondary"
    } else {
        "primary"
    }
}

fn write_usage(out: &mut String, usage: vk::CommandBufferUsageFlags) {
    const NAMES: [(vk::CommandBufferUsageFlags, &str); 3] = [
        (
            vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
            "one_time_submit",
        ),
        (
            vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE,
            "render_pass_continue",
        ),
        (
            vk::CommandBufferUsageFlags::SIMULTANEOUS_USE,
            "simultaneous_use",
        ),
    ];
    let mut first = true;
    for (flag, name) in NAMES {
        if usage.contains(flag) {
            if !first {
                out.push('|');
            }
            out.push_str(name);
            first = false;
        }
    }
    if first {
        out.push_str("none");
    }
}

/// Start of a primary command buffer, the first thing it executes.
#[inline]
pub fn trace_start_cmd_buffer(
    rec: &Recorder<'_>,
    trace: &mut CommandTrace,
    level: vk::CommandBufferLevel,
    usage: vk::CommandBufferUsageFlags,
) {
    use ash::vk::Handle;
    trace.append(
        rec,
        Payload::StartCmdBuffer {
            cmd: rec.cmd.as_raw(),
            level,
            usage,
        },
    );
}

/// End of a primary command buffer, after all of its work.
#[inline]
pub fn trace_end_cmd_buffer(rec: &Recorder<'_>, trace: &mut CommandTrace) {
    use ash::vk::Handle;
    trace.append(
        rec,
        Payload::EndCmdBuffer {
            cmd: rec.cmd.as_raw(),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(p: Payload) -> String {
        let mut s = String::new();
        p.write_args(&mut s);
        s
    }

    #[test]
    fn printers() {
        assert_eq!(
            args(Payload::StartCmdBuffer {
                cmd: 0x1234,
                level: vk::CommandBufferLevel::PRIMARY,
                usage: vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT
                    | vk::CommandBufferUsageFlags::SIMULTANEOUS_USE,
            }),
            "cmd=0x1234, level=primary, usage=one_time_submit|simultaneous_use"
        );
        assert_eq!(
            args(Payload::StartCmdBuffer {
                cmd: 0x10,
                level: vk::CommandBufferLevel::SECONDARY,
                usage: vk::CommandBufferUsageFlags::empty(),
            }),
            "cmd=0x10, level=secondary, usage=none"
        );
        assert_eq!(args(Payload::EndCmdBuffer { cmd: 0xff }), "cmd=0xff");
    }
}
