//! The command buffer kinds traceq's throughput is measured on: how each records its draws
//! and submits them. Most applications record one-time command buffers; engines that
//! pre-record resubmit reusable ones, alone or as a stream; some use simultaneous-use ones
//! or secondaries executed by a one-time primary. Each kind takes the layer's own path.

use ash::vk;

use super::side::Side;
use crate::vk::{check, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A one-time primary, recorded for each batch.
    OneTime,
    /// A reusable primary (usage 0), recorded for each batch and submitted once.
    ReusableOnce,
    /// A reusable primary recorded once and submitted for every batch.
    Resubmit,
    /// [`STREAM`] distinct reusable primaries of a share of the draws each, recorded once,
    /// each submitted (one `vkQueueSubmit` each) in every batch.
    Stream,
    /// A simultaneous-use primary recorded once and submitted for every batch.
    Simultaneous,
    /// A one-time primary recorded for each batch, executing a reusable secondary (recorded
    /// once) that holds the draws.
    Secondary,
}

/// Command buffers of the stream kind.
pub const STREAM: u32 = 100;

pub const KINDS: [Kind; 6] = [
    Kind::OneTime,
    Kind::ReusableOnce,
    Kind::Resubmit,
    Kind::Stream,
    Kind::Simultaneous,
    Kind::Secondary,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::OneTime => "one-time",
            Kind::ReusableOnce => "reusable-once",
            Kind::Resubmit => "resubmit",
            Kind::Stream => "stream-100",
            Kind::Simultaneous => "simultaneous",
            Kind::Secondary => "secondary",
        }
    }

    pub fn named(name: &str) -> Option<Kind> {
        KINDS.into_iter().find(|k| k.name() == name)
    }
}

/// Records and submits `batches` batches of `draws` draws of `vertices` vertices (0: the
/// driver does next to nothing, 3: a visible triangle) as `kind` does, waiting for each.
pub fn run(side: &Side, kind: Kind, draws: u32, batches: u32, vertices: u32) -> Result<()> {
    let dev = &side.dev;
    let d = &dev.device;
    let usage = |kind| match kind {
        Kind::OneTime | Kind::Secondary => vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
        Kind::Simultaneous => vk::CommandBufferUsageFlags::SIMULTANEOUS_USE,
        _ => vk::CommandBufferUsageFlags::empty(),
    };
    let inline = |cb: vk::CommandBuffer, count: u32| -> Result<()> {
        dev.begin(cb, usage(kind))?;
        side.begin_pass(cb);
        // SAFETY: recording inside a render pass with the side's pipeline bound.
        unsafe {
            for _ in 0..count {
                d.cmd_draw(cb, vertices, 1, 0, 0);
            }
            d.cmd_end_render_pass(cb);
        }
        dev.end(cb)
    };
    let cbs: Vec<vk::CommandBuffer> = match kind {
        Kind::Stream => dev.command_buffers(STREAM)?,
        _ => vec![side.cb],
    };
    let secondary = match kind {
        Kind::Secondary => Some(secondary(side, draws, vertices)?),
        _ => None,
    };
    let once = matches!(kind, Kind::Resubmit | Kind::Simultaneous | Kind::Stream);
    if once {
        let share = draws / cbs.len() as u32;
        for &cb in &cbs {
            inline(cb, share)?;
        }
    }
    for _ in 0..batches {
        match (kind, secondary) {
            (_, Some(child)) => execute(side, child)?,
            _ if !once => inline(side.cb, draws)?,
            _ => {}
        }
        for (i, cb) in cbs.iter().enumerate() {
            let fence = if i + 1 == cbs.len() {
                side.fence
            } else {
                vk::Fence::null()
            };
            let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(cb));
            // SAFETY: recorded command buffers not pending (each batch is waited for, a
            // simultaneous-use one may be anyway); the side's unsignalled fence last.
            let result = unsafe { d.queue_submit(dev.queue, &[submit], fence) };
            check(result, "vkQueueSubmit")?;
        }
        // Lavapipe runs a million draws with their timestamps in about a minute.
        // SAFETY: the side's fence, signalled by the last submission above.
        let result = unsafe { d.wait_for_fences(&[side.fence], true, 600_000_000_000) };
        check(result, "vkWaitForFences")?;
        // SAFETY: as above; the fence is signalled and not in use.
        check(unsafe { d.reset_fences(&[side.fence]) }, "vkResetFences")?;
    }
    Ok(())
}

/// A reusable secondary that continues the side's render pass with `draws` draws.
fn secondary(side: &Side, draws: u32, vertices: u32) -> Result<vk::CommandBuffer> {
    let inheritance = vk::CommandBufferInheritanceInfo::default()
        .render_pass(side.pass)
        .subpass(0)
        .framebuffer(side.fb);
    let usage = vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE;
    side.dev.secondary(usage, &inheritance, |cb| {
        side.draw.bind(&side.dev, cb);
        for _ in 0..draws {
            // SAFETY: recording a secondary that continues the render pass, the pipeline
            // bound.
            unsafe { side.dev.device.cmd_draw(cb, vertices, 1, 0, 0) };
        }
    })
}

/// Records the side's command buffer as a one-time primary whose render pass executes
/// `child`.
fn execute(side: &Side, child: vk::CommandBuffer) -> Result<()> {
    let (dev, cb) = (&side.dev, side.cb);
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    side.begin_pass_with(cb, vk::SubpassContents::SECONDARY_COMMAND_BUFFERS);
    // SAFETY: inside a render pass begun for secondaries; `child` continues it.
    unsafe {
        dev.device.cmd_execute_commands(cb, &[child]);
        dev.device.cmd_end_render_pass(cb);
    }
    dev.end(cb)
}
