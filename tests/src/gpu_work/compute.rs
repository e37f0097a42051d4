//! Dispatches: direct, with a base group, and indirect, each after the previous one's
//! writes.

use ash::vk;

use super::graphics::full_barrier;
use super::{free, record_once, WORDS};
use crate::submitter::Submitter;
use crate::vk::{Buffer, Device, FillPipeline, Result};

/// vkCmdDispatch, vkCmdDispatchBase and vkCmdDispatchIndirect, each after the previous one's
/// writes.
pub fn compute(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let fill = FillPipeline::new(dev, &data)?;
    let based = FillPipeline::with_flags(dev, &data, vk::PipelineCreateFlags::DISPATCH_BASE)?;
    let indirect = Buffer::new(dev, 64, vk::BufferUsageFlags::INDIRECT_BUFFER)?;
    // SAFETY: the mapping holds 3 words and no GPU work uses it yet.
    unsafe {
        std::ptr::copy_nonoverlapping(
            [WORDS / 64, 1u32, 1].as_ptr(),
            indirect.mapped as *mut u32,
            3,
        )
    };
    // The indirect dispatch comes before the based one: Lavapipe 22.3 keeps the base group
    // of a vkCmdDispatchBase for a later vkCmdDispatchIndirect.
    let cb = record_once(dev, |cb| {
        fill.record(dev, cb, 1, WORDS);
        full_barrier(dev, cb);
        fill.record_bindings(dev, cb, &fill, 9, WORDS);
        // SAFETY: `cb` is recording; the indirect buffer holds a dispatch command.
        unsafe { d.cmd_dispatch_indirect(cb, indirect.buffer, 0) };
        full_barrier(dev, cb);
        // The base pipeline's bindings, then a dispatch of groups 1.. (words 64..).
        fill.record_bindings(dev, cb, &based, 7, WORDS);
        // SAFETY: `cb` is recording with a DISPATCH_BASE pipeline bound.
        unsafe { d.cmd_dispatch_base(cb, 1, 0, 0, WORDS / 64 - 1, 1, 1) };
        Ok(())
    })?;
    sub.submit("compute", &[cb], None)?;
    let words = data.words();
    let ok = (0..WORDS as usize).all(|i| words[i] == i as u32 * 3 + if i < 64 { 9 } else { 7 });
    if !ok {
        eprintln!("utrace-workload: compute results wrong: {:?}", &words[..4]);
    }
    free(dev, &[cb]);
    fill.destroy(dev);
    based.destroy(dev);
    data.destroy(dev);
    indirect.destroy(dev);
    Ok(ok)
}
