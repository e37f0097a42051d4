//! The `passes` scenario, the workload `utrace diff` compares: frames of three labelled
//! passes ("shadow", "lighting", "post"), each a fixed number of compute dispatches over a
//! 512 KiB buffer, one command buffer per frame, submitted and waited for. With
//! `--heavy-pass NAME [--heavy-factor F]` one pass does F times as much work (10 by
//! default; a fraction such as 1.05 for a small step): the deliberate slowdown a diff of
//! two runs must find.

use ash::vk;

use crate::submitter::Submitter;
use crate::vk::{verify_fill, Buffer, Device, FillPipeline, Instance, Result};

/// The scenario's name (`utrace-workload --scenario passes`).
pub const SCENARIO: &str = "passes";

/// The passes of each frame, in order (their debug labels).
pub const PASSES: &[&str] = &["shadow", "lighting", "post"];

/// Frames when `--frames` does not say: enough ranges per label for a significance test.
pub const DEFAULT_FRAMES: u32 = 20;

/// The heavy factor when `--heavy-pass` comes without `--heavy-factor`.
pub const DEFAULT_HEAVY_FACTOR: f64 = 10.0;

/// Words each dispatch writes (512 KiB): on Lavapipe a dispatch takes a few hundred µs, far
/// above the timer's granularity and the layer's own overhead.
const WORDS: u32 = 1 << 17;

/// Dispatches per pass (the heavy pass: times its factor).
const DISPATCHES: u32 = 2;

/// One pass made heavier.
pub struct Heavy {
    pub pass: String,
    pub factor: f64,
}

/// A pass's dispatches with `factor` times the base work: the base's count times the
/// factor's whole part, each over `WORDS` times what is left of the factor (whole
/// workgroups of 64 words, at most twice `WORDS`). The work grows by the factor with no
/// dispatch added for a fraction: on Lavapipe a dispatch's fixed cost made an extra small
/// one for +5% of the words cost +30% of the time.
fn dispatches(factor: f64) -> (u32, u32) {
    let whole = factor.floor().max(1.0);
    let words = (f64::from(WORDS) * factor / whole) as u32 / 64 * 64;
    (DISPATCHES * whole as u32, words.clamp(WORDS, 2 * WORDS))
}

/// Runs `frames` frames; returns whether every frame's result was right.
pub fn run(
    inst: &Instance,
    dev: &Device,
    sub: &mut Submitter,
    frames: u32,
    heavy: Option<&Heavy>,
) -> Result<bool> {
    if let Some(h) = heavy {
        if !(PASSES.contains(&h.pass.as_str()) && (1.0..=1000.0).contains(&h.factor)) {
            return Err(format!(
                "--heavy-pass {:?} --heavy-factor {}: the pass must be one of {} and the factor 1 to 1000",
                h.pass,
                h.factor,
                PASSES.join(", ")
            ));
        }
    }
    let d = &dev.device;
    // VK_EXT_debug_utils is enabled on the instance (`Instance::new` fails without it).
    let labels = ash::ext::debug_utils::Device::new(&inst.instance, d);
    let data = Buffer::new(
        dev,
        // Room for a heavy pass's longer dispatches.
        u64::from(2 * WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let fill = FillPipeline::new(dev, &data)?;
    let mut ok = true;
    let mut last_base = 0;
    for f in 0..frames {
        let cb = dev.command_buffers(1)?[0];
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        for (p, &pass) in PASSES.iter().enumerate() {
            let factor = match heavy {
                Some(h) if h.pass == pass => h.factor,
                _ => 1.0,
            };
            let (count, words) = dispatches(factor);
            let name = std::ffi::CString::new(pass).map_err(|e| e.to_string())?;
            // SAFETY: `cb` is recording; the label is closed below, in the same buffer.
            unsafe {
                labels.cmd_begin_debug_utils_label(
                    cb,
                    &vk::DebugUtilsLabelEXT::default().label_name(&name),
                )
            };
            for k in 0..count {
                last_base = f * 1000 + p as u32 * 100 + k % 100;
                fill.record(dev, cb, last_base, words);
                // Each dispatch after the previous one's writes (Lavapipe runs them in
                // order anyway; the barrier makes that the API's promise too).
                barrier(
                    dev,
                    cb,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::AccessFlags::SHADER_WRITE,
                );
            }
            // SAFETY: closes the label opened above.
            unsafe { labels.cmd_end_debug_utils_label(cb) };
        }
        // The last writes visible to the host, which checks them.
        barrier(
            dev,
            cb,
            vk::PipelineStageFlags::HOST,
            vk::AccessFlags::HOST_READ,
        );
        dev.end(cb)?;
        sub.submit(&format!("frame-{f}"), &[cb], None)?;
        ok &= match verify_fill(&data, last_base, WORDS) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("utrace-workload: passes, frame {f}: {e}");
                false
            }
        };
        // SAFETY: the submission completed (`submit` waits for its fence).
        unsafe { d.free_command_buffers(dev.pool, &[cb]) };
    }
    fill.destroy(dev);
    data.destroy(dev);
    eprintln!(
        "utrace-workload: passes: {frames} frames of {} ({})",
        PASSES.join(", "),
        match heavy {
            Some(h) => format!("{} {}x heavier", h.pass, h.factor),
            None => "the baseline".into(),
        }
    );
    Ok(ok)
}

/// Orders the compute writes before it ahead of `stage`'s `access` after it.
fn barrier(
    dev: &Device,
    cb: vk::CommandBuffer,
    stage: vk::PipelineStageFlags,
    access: vk::AccessFlags,
) {
    let barrier = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
        .dst_access_mask(access);
    // SAFETY: `cb` is recording.
    unsafe {
        dev.device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            stage,
            vk::DependencyFlags::empty(),
            &[barrier],
            &[],
            &[],
        )
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn fractions_of_the_work_lengthen_the_dispatches() {
        use super::WORDS;
        assert_eq!(super::dispatches(1.0), (2, WORDS));
        assert_eq!(super::dispatches(10.0), (20, WORDS));
        // +10%: the same two dispatches, each 10% longer, in whole workgroups of 64 words.
        assert_eq!(super::dispatches(1.1), (2, 144_128));
        assert_eq!(super::dispatches(1.05), (2, 137_600));
        // 2.5: four dispatches, each a quarter longer.
        assert_eq!(super::dispatches(2.5), (4, 163_840));
    }
}
