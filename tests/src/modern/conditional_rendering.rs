//! The `conditional_rendering` scenario: VK_EXT_conditional_rendering around dispatches, on
//! Lavapipe 22.3 and 25.0 with validation beneath (1.3.239 knows the extension). One
//! submission, "conditional": a conditional block on a non-zero predicate holding a
//! dispatch that fills region A, then an INVERTED block on the same predicate holding a
//! dispatch that would fill region B. The host checks region A was written and region B
//! left untouched (the inverted block was skipped).

use std::ffi::c_void;

use ash::vk;

use crate::submitter::Submitter;
use crate::vk::{verify_fill, Buffer, Device, Extra, FillPipeline, Instance, Result};

/// Words of each region.
const WORDS: u32 = 256;
/// The predicate's offset in its buffer (the word before it is zero: a predicate read from
/// offset 0 would skip the first block and run the second).
const PREDICATE_OFFSET: u64 = 4;
/// `base` of `fill.comp` in each region (`data[i] = i * 3 + base`).
const BASE_A: u32 = 1;
const BASE_B: u32 = 5;

pub fn device(inst: &Instance) -> Result<Device> {
    let physical = inst.physical_device()?;
    let extensions = [ash::ext::conditional_rendering::NAME];
    super::require_extensions(inst, physical, &extensions)?;
    let mut conditional = vk::PhysicalDeviceConditionalRenderingFeaturesEXT::default();
    let mut features = vk::PhysicalDeviceFeatures2 {
        p_next: &mut conditional as *mut _ as *mut c_void,
        ..Default::default()
    };
    // SAFETY: a live physical device with the extension; the chained structure lives.
    unsafe {
        inst.instance
            .get_physical_device_features2(physical, &mut features)
    };
    if conditional.conditional_rendering != vk::TRUE {
        return Err("the device lacks the conditionalRendering feature".into());
    }
    let mut conditional =
        vk::PhysicalDeviceConditionalRenderingFeaturesEXT::default().conditional_rendering(true);
    let extra = Extra {
        next: &mut conditional as *mut _ as *mut c_void,
        ..Extra::default()
    };
    Device::new_with(inst, &extensions, true, extra)
}

pub fn run(inst: &Instance, dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let conditional = ash::ext::conditional_rendering::Device::new(&inst.instance, d);
    let size = u64::from(WORDS) * 4;
    let region_a = Buffer::new(dev, size, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let region_b = Buffer::new(dev, size, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let predicate = Buffer::new(dev, 16, vk::BufferUsageFlags::CONDITIONAL_RENDERING_EXT)?;
    // SAFETY: the mappings hold `size` and 16 bytes; no GPU work uses the buffers yet.
    unsafe {
        std::ptr::write_bytes(region_a.mapped, 0, size as usize);
        std::ptr::write_bytes(region_b.mapped, 0, size as usize);
        std::ptr::copy_nonoverlapping([0u32, 7, 0, 0].as_ptr(), predicate.mapped as *mut u32, 4);
    }
    let fill_a = FillPipeline::new(dev, &region_a)?;
    let fill_b = FillPipeline::new(dev, &region_b)?;
    super::name_object(inst, dev, fill_a.pipeline, c"conditional A")?;
    super::name_object(inst, dev, fill_b.pipeline, c"conditional B")?;

    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    // (ash 0.38 has no wrappers for these two commands: they are called through `fp()`.)
    let begin = |flags| {
        vk::ConditionalRenderingBeginInfoEXT::default()
            .buffer(predicate.buffer)
            .offset(PREDICATE_OFFSET)
            .flags(flags)
    };
    let to_host = [vk::MemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
        .src_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::HOST)
        .dst_access_mask(vk::AccessFlags2::HOST_READ)];
    // SAFETY: `cb` is recording outside a render pass; conditionalRendering and
    // synchronization2 are enabled; the predicate buffer has the CONDITIONAL_RENDERING usage
    // and its offset is a multiple of 4.
    unsafe {
        let fp = conditional.fp();
        let normal = begin(vk::ConditionalRenderingFlagsEXT::empty());
        (fp.cmd_begin_conditional_rendering_ext)(cb, &normal);
        fill_a.record(dev, cb, BASE_A, WORDS);
        (fp.cmd_end_conditional_rendering_ext)(cb);
        let inverted = begin(vk::ConditionalRenderingFlagsEXT::INVERTED);
        (fp.cmd_begin_conditional_rendering_ext)(cb, &inverted);
        fill_b.record(dev, cb, BASE_B, WORDS);
        (fp.cmd_end_conditional_rendering_ext)(cb);
        d.cmd_pipeline_barrier2(cb, &vk::DependencyInfo::default().memory_barriers(&to_host));
    }
    dev.end(cb)?;
    sub.submit("conditional", &[cb], None)?;
    let skipped = match region_b.words().iter().position(|&w| w != 0) {
        Some(i) => Err(format!(
            "the inverted block ran: region B word {i} is {}",
            region_b.words()[i]
        )),
        None => Ok(()),
    };
    let ok = [verify_fill(&region_a, BASE_A, WORDS), skipped]
        .into_iter()
        .map(|r| r.map_err(|e| eprintln!("utrace-workload: conditional: {e}")))
        .fold(true, |ok, r| ok & r.is_ok());

    // SAFETY: the submission was waited for.
    unsafe { d.free_command_buffers(dev.pool, &[cb]) };
    fill_a.destroy(dev);
    fill_b.destroy(dev);
    predicate.destroy(dev);
    region_b.destroy(dev);
    region_a.destroy(dev);
    Ok(ok)
}
