//! How fast the traceq thread writes: one device with the layer records command buffers of
//! N traced draws, of each kind applications use ([`Kind`]), and submits them; the layer's
//! own account of its work (`UTRACE_LOG=info`:
//! "traceq wrote E events in T ms of work, ... (C ms on the CPU, ...)") is read from the
//! child's stderr by the parent. And what the layer adds to the process's memory: the peak
//! resident size of that child against a child without the layer that times each draw
//! itself (two `vkCmdWriteTimestamp`, read back after the batch).

use ash::vk;

use super::side::Side;
use super::throughput_kinds::{self, Kind};
use crate::vk::{check, Result};

/// Draws per batch, and how many such batches are submitted.
pub const SIZES: [(u32, u32); 2] = [(10_000, 20), (100_000, 4)];
/// The million-draw size (`--million`), for the kinds [`MILLION_KINDS`]: Lavapipe takes
/// about a minute of GPU time for a million traced draws.
pub const MILLION: (u32, u32) = (1_000_000, 1);
pub const MILLION_KINDS: [Kind; 2] = [Kind::OneTime, Kind::ReusableOnce];

/// Draws of the memory comparison (one batch).
pub const MEMORY_DRAWS: u32 = 1_000_000;

/// Runs in a child whose environment selects the format: `batches` batches of `draws`
/// draws of `vertices` vertices, recorded and submitted as `kind` does, each waited for,
/// then the device destroyed (which waits for the trace to be written). Says its peak
/// resident size on stderr ([`parse_peak_rss`]).
pub fn run(draws: u32, batches: u32, kind: Kind, vertices: u32) -> Result<()> {
    let side = Side::new("B", true)?;
    throughput_kinds::run(&side, kind, draws, batches, vertices)?;
    side.destroy();
    eprintln!("peak_rss_kb={}", peak_rss_kb().unwrap_or(0));
    Ok(())
}

/// The memory comparison's side without the layer: `batches` submissions of one command
/// buffer of `draws` draws, each bracketed with two timestamps of the child's own, read
/// back after each batch. Says its peak resident size on stderr.
pub fn hand_timed(draws: u32, batches: u32) -> Result<()> {
    let side = Side::new("B", false)?;
    let d = &side.dev.device;
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(2 * draws);
    // SAFETY: a valid create info on a live device.
    let pool = unsafe { d.create_query_pool(&info, None) };
    let pool = pool.map_err(|e| format!("vkCreateQueryPool: {e}"))?;
    side.dev
        .begin(side.cb, vk::CommandBufferUsageFlags::empty())?;
    // SAFETY: recording outside a render pass; the pool holds 2 * draws queries.
    unsafe { d.cmd_reset_query_pool(side.cb, pool, 0, 2 * draws) };
    side.begin_pass(side.cb);
    for i in 0..draws {
        // SAFETY: recording inside a render pass with a pipeline bound. No vertices: the
        // driver's work stays small. The pool holds 2 * draws queries, reset above.
        unsafe {
            d.cmd_write_timestamp(side.cb, vk::PipelineStageFlags::TOP_OF_PIPE, pool, 2 * i);
            d.cmd_draw(side.cb, 0, 1, 0, 0);
            let bottom = vk::PipelineStageFlags::BOTTOM_OF_PIPE;
            d.cmd_write_timestamp(side.cb, bottom, pool, 2 * i + 1);
        }
    }
    // SAFETY: inside the render pass begun above.
    unsafe { d.cmd_end_render_pass(side.cb) };
    side.dev.end(side.cb)?;
    let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&side.cb));
    for _ in 0..batches {
        // SAFETY: a recorded command buffer, not pending; the side's unsignalled fence.
        let result = unsafe { d.queue_submit(side.dev.queue, &[submit], side.fence) };
        check(result, "vkQueueSubmit")?;
        // SAFETY: the side's fence, signalled by the submission above.
        let result = unsafe { d.wait_for_fences(&[side.fence], true, 600_000_000_000) };
        check(result, "vkWaitForFences")?;
        // SAFETY: as above; the fence is signalled and not in use.
        check(unsafe { d.reset_fences(&[side.fence]) }, "vkResetFences")?;
        let mut values = vec![0u64; 2 * draws as usize];
        let flags = vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT;
        // SAFETY: the batch that wrote every query of the pool completed.
        let result = unsafe { d.get_query_pool_results(pool, 0, &mut values, flags) };
        result.map_err(|e| format!("vkGetQueryPoolResults: {e}"))?;
        std::hint::black_box(&values);
    }
    // SAFETY: no pending work uses the pool.
    unsafe { d.destroy_query_pool(pool, None) };
    side.destroy();
    eprintln!("peak_rss_kb={}", peak_rss_kb().unwrap_or(0));
    Ok(())
}

/// The process's peak resident size (`VmHWM`), in KiB.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The peak resident size a child said, in KiB.
pub fn parse_peak_rss(stderr: &str) -> Option<u64> {
    let line = stderr.lines().find(|l| l.starts_with("peak_rss_kb="))?;
    line["peak_rss_kb=".len()..].trim().parse().ok()
}

/// What the child's "traceq wrote" line says.
#[derive(Debug, PartialEq)]
pub struct Rates {
    pub events: u64,
    /// M events/s of the thread's working time (wall clock).
    pub wall: f64,
    /// M events/s of the thread's CPU time.
    pub cpu: f64,
}

pub fn parse(stderr: &str) -> Option<Rates> {
    let line = stderr.lines().find(|l| l.contains("traceq wrote"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "wrote")?;
    let events = words.get(at + 1)?.parse().ok()?;
    // "X M events/s" twice: the wall rate, then the CPU rate.
    let mut rates = words
        .iter()
        .enumerate()
        .filter(|(_, w)| **w == "M")
        .filter_map(|(i, _)| words.get(i.checked_sub(1)?)?.parse().ok());
    let wall = rates.next()?;
    let cpu = rates.next()?;
    Some(Rates { events, wall, cpu })
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_the_layer_line() {
        let line = "utrace: info: device 0: traceq wrote 200042 events in 40.1 ms of work, 4.99 M events/s (30.2 ms on the CPU, 6.62 M events/s); 3.0 ms more giving their query chunks back";
        let rates = super::Rates {
            events: 200042,
            wall: 4.99,
            cpu: 6.62,
        };
        assert_eq!(super::parse(line), Some(rates));
        assert_eq!(super::parse("nothing"), None);
        assert_eq!(super::parse_peak_rss("x\npeak_rss_kb=2048\n"), Some(2048));
    }
}
