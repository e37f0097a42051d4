//! Pipeline statistics of command buffers the layer does not track between runs, whose
//! every run its copy reads: one for simultaneous use, pending twice at once, and a
//! reusable one that executes a secondary.

use ash::vk;

use super::{free, WORDS};
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, FillPipeline, Result};

/// A simultaneous-use command buffer of a dispatch of 5 groups of 64 (320 invocations),
/// submitted twice before either run is waited for, then once more; then a reusable
/// primary that dispatches 2 groups itself and executes a secondary dispatching 3 (the
/// secondary's work is not counted where no query may be active across it), submitted
/// twice; then a simultaneous-use one of 70 dispatches of 1 group, submitted once.
pub fn counters_simultaneous(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let fill = FillPipeline::new(dev, &data)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
    fill.record_bindings(dev, cb, &fill, 0, WORDS);
    // SAFETY: `cb` is recording with the fill pipeline bound.
    unsafe { d.cmd_dispatch(cb, 5, 1, 1) };
    dev.end(cb)?;
    let fences = [dev.fence()?, dev.fence()?];
    let mut before = [0u64; 2];
    for (k, &fence) in fences.iter().enumerate() {
        let info = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cb));
        before[k] = monotonic_ns();
        check(
            // SAFETY: a recorded simultaneous-use command buffer; the fence is unsignalled.
            unsafe { d.queue_submit(dev.queue, &[info], fence) },
            "vkQueueSubmit",
        )?;
    }
    for (k, &fence) in fences.iter().enumerate() {
        dev.wait_and_reset(fence)?;
        sub.note(
            &format!("pending-{}", k + 1),
            &[cb],
            before[k],
            monotonic_ns(),
        );
    }
    sub.submit("simultaneous-again", &[cb], None)?;
    // A reusable primary executing a secondary: not tracked, every run wrapped.
    let inheritance = vk::CommandBufferInheritanceInfo::default();
    let secondary = dev.secondary(vk::CommandBufferUsageFlags::empty(), &inheritance, |s| {
        fill.record_bindings(dev, s, &fill, 0, WORDS);
        // SAFETY: `s` is recording with the fill pipeline bound.
        unsafe { d.cmd_dispatch(s, 3, 1, 1) };
    })?;
    let primary = dev.command_buffers(1)?[0];
    dev.begin(primary, vk::CommandBufferUsageFlags::empty())?;
    fill.record_bindings(dev, primary, &fill, 0, WORDS);
    // SAFETY: `primary` is recording outside a render pass, the fill pipeline bound; the
    // secondary is executable.
    unsafe {
        d.cmd_dispatch(primary, 2, 1, 1);
        d.cmd_execute_commands(primary, &[secondary]);
    }
    dev.end(primary)?;
    for run in 0..2 {
        sub.submit(&format!("with-secondary-{run}"), &[primary], None)?;
    }
    // A simultaneous-use command buffer of 70 dispatches of one group: more ranges than a
    // reusable recording's one query pool holds (64).
    let many = dev.command_buffers(1)?[0];
    dev.begin(many, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
    fill.record_bindings(dev, many, &fill, 0, WORDS);
    for _ in 0..70 {
        // SAFETY: `many` is recording with the fill pipeline bound.
        unsafe { d.cmd_dispatch(many, 1, 1, 1) };
    }
    dev.end(many)?;
    sub.submit("many-ranges", &[many], None)?;
    // SAFETY: every submission completed.
    unsafe {
        for f in fences {
            d.destroy_fence(f, None);
        }
    }
    free(dev, &[cb, primary, secondary, many]);
    fill.destroy(dev);
    data.destroy(dev);
    Ok(true)
}
