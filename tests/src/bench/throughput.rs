//! How fast the traceq thread writes: one device with the layer records command buffers of
//! N traced draws and submits them; the layer's own account of its work (`UTRACE_LOG=info`:
//! "traceq wrote E events in T ms of work") is read from the child's stderr by the parent.

use ash::vk;

use super::side::Side;
use crate::vk::{check, Result};

/// Draws per command buffer, and how many such batches are submitted.
pub const SIZES: [(u32, u32); 3] = [(10_000, 20), (100_000, 4), (1_000_000, 1)];

/// Runs in a child whose environment selects the format: `batches` submissions of one
/// command buffer of `draws` draws, each waited for, then the device destroyed (which waits
/// for the trace to be written).
pub fn run(draws: u32, batches: u32) -> Result<()> {
    let side = Side::new("B", true)?;
    let d = &side.dev.device;
    side.dev
        .begin(side.cb, vk::CommandBufferUsageFlags::empty())?;
    side.begin_pass(side.cb);
    for _ in 0..draws {
        // SAFETY: recording inside a render pass with a pipeline bound. No vertices: the
        // driver's work stays small, the layer still brackets the draw.
        unsafe { d.cmd_draw(side.cb, 0, 1, 0, 0) };
    }
    // SAFETY: inside the render pass begun above.
    unsafe { d.cmd_end_render_pass(side.cb) };
    side.dev.end(side.cb)?;
    let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&side.cb));
    for _ in 0..batches {
        // SAFETY: a recorded command buffer, not pending; the side's unsignalled fence.
        let result = unsafe { d.queue_submit(side.dev.queue, &[submit], side.fence) };
        check(result, "vkQueueSubmit")?;
        // Lavapipe runs a million draws with their timestamps in tens of seconds.
        // SAFETY: the side's fence, signalled by the submission above.
        let result = unsafe { d.wait_for_fences(&[side.fence], true, 300_000_000_000) };
        check(result, "vkWaitForFences")?;
        // SAFETY: as above; the fence is signalled and not in use.
        check(unsafe { d.reset_fences(&[side.fence]) }, "vkResetFences")?;
    }
    side.destroy();
    Ok(())
}

/// The events and M events/s of the child's "traceq wrote" line.
pub fn parse(stderr: &str) -> Option<(u64, f64)> {
    let line = stderr.lines().find(|l| l.contains("traceq wrote"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "wrote")?;
    let events = words.get(at + 1)?.parse().ok()?;
    let rate_at = words.iter().position(|w| *w == "M")?;
    let rate = words.get(rate_at.checked_sub(1)?)?.parse().ok()?;
    Some((events, rate))
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_the_layer_line() {
        let line = "utrace: info: device 0: traceq wrote 200042 events in 40.1 ms of work, 4.99 M events/s (30.2 ms on the CPU, 6.62 M events/s); 3.0 ms more giving their query chunks back";
        assert_eq!(super::parse(line), Some((200042, 4.99)));
        assert_eq!(super::parse("nothing"), None);
    }
}
