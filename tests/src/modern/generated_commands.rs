//! The `generated_commands` scenario: VK_EXT_device_generated_commands (Lavapipe 25.0, no
//! validation: 1.3.239 does not know the extension). A compute pipeline ("generated fill")
//! writes 64 words per workgroup of a storage buffer, from the offset its push constants
//! give. An indirect commands layout of a push-constant token and a dispatch token, with the
//! bound pipeline (no indirect execution set), turns each of three host-written sequences
//! into a push and a dispatch. Submission "dgc" executes them, preprocessed implicitly;
//! "dgc preprocessed" preprocesses them explicitly (the state from the same command buffer),
//! then executes the result. After each the host checks that exactly the three sequences'
//! words were written.

use std::ffi::c_void;
use std::mem::{offset_of, size_of};

use ash::vk;

mod commands;

use super::dgc_ext::{self as ext, Fns};
use crate::submitter::Submitter;
use crate::vk::{Buffer, Device, Extra, FillPipeline, Instance, Result};
use commands::Generated;

/// Invocations per workgroup of `generated.comp`.
const GROUP: u32 = 64;
/// Words of the target buffer.
const WORDS: usize = 1024;

/// One sequence of the indirect buffer: the push constants (`offset`, `tag` of
/// `generated.comp`), then a VkDispatchIndirectCommand.
#[repr(C)]
#[derive(Clone, Copy)]
struct Sequence {
    offset: u32,
    tag: u32,
    groups: [u32; 3],
}

const SEQUENCES: [Sequence; 3] = [
    Sequence {
        offset: 0,
        tag: 0x1000,
        groups: [1, 1, 1],
    },
    Sequence {
        offset: 256,
        tag: 0x2000,
        groups: [2, 1, 1],
    },
    Sequence {
        offset: 640,
        tag: 0x3000,
        groups: [3, 1, 1],
    },
];
const STRIDE: u32 = size_of::<Sequence>() as u32;
const PUSH_SIZE: u32 = offset_of!(Sequence, groups) as u32;

pub fn device(inst: &Instance) -> Result<Device> {
    let physical = inst.physical_device()?;
    let extensions = [ext::NAME, ash::khr::maintenance5::NAME];
    super::require_extensions(inst, physical, &extensions)?;
    let mut maintenance5 = vk::PhysicalDeviceMaintenance5FeaturesKHR::default();
    let mut dgc = ext::PhysicalDeviceDeviceGeneratedCommandsFeaturesEXT {
        s_type: ext::STYPE_FEATURES,
        p_next: &mut maintenance5 as *mut _ as *mut c_void,
        device_generated_commands: vk::FALSE,
        dynamic_generated_pipeline_layout: vk::FALSE,
    };
    let mut features = vk::PhysicalDeviceFeatures2 {
        p_next: &mut dgc as *mut _ as *mut c_void,
        ..Default::default()
    };
    // SAFETY: a live physical device with both extensions; the chain's structures live.
    unsafe {
        inst.instance
            .get_physical_device_features2(physical, &mut features)
    };
    if dgc.device_generated_commands != vk::TRUE || maintenance5.maintenance5 != vk::TRUE {
        return Err("the device lacks the deviceGeneratedCommands or maintenance5 feature".into());
    }
    let mut props = ext::PhysicalDeviceDeviceGeneratedCommandsPropertiesEXT {
        s_type: ext::STYPE_PROPERTIES,
        // SAFETY: all-zero is a valid value of every other field (integers and flags).
        ..unsafe { std::mem::zeroed() }
    };
    let mut props2 = vk::PhysicalDeviceProperties2 {
        p_next: &mut props as *mut _ as *mut c_void,
        ..Default::default()
    };
    // SAFETY: as above.
    unsafe {
        inst.instance
            .get_physical_device_properties2(physical, &mut props2)
    };
    if !props
        .supported_indirect_commands_shader_stages
        .contains(vk::ShaderStageFlags::COMPUTE)
        || props.max_indirect_sequence_count < SEQUENCES.len() as u32
        || props.max_indirect_commands_indirect_stride < STRIDE
        || props.max_indirect_commands_token_offset < PUSH_SIZE
    {
        return Err(format!(
            "the device's generated-commands limits are too small: {props:?}"
        ));
    }
    let mut maintenance5 = vk::PhysicalDeviceMaintenance5FeaturesKHR::default().maintenance5(true);
    let mut dgc = ext::PhysicalDeviceDeviceGeneratedCommandsFeaturesEXT {
        s_type: ext::STYPE_FEATURES,
        p_next: &mut maintenance5 as *mut _ as *mut c_void,
        device_generated_commands: vk::TRUE,
        dynamic_generated_pipeline_layout: vk::FALSE,
    };
    let extra = Extra {
        buffer_device_address: true,
        next: &mut dgc as *mut _ as *mut c_void,
        ..Extra::default()
    };
    Device::new_with(inst, &extensions, true, extra)
}

pub fn run(inst: &Instance, dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let fns = Fns::load(inst, dev)?;
    let target = Buffer::new(
        dev,
        (WORDS * 4) as u64,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let fill = FillPipeline::with_shader(
        dev,
        &target,
        include_bytes!("../../../shaders/generated.comp.spv"),
        PUSH_SIZE,
        vk::PipelineCreateFlags::empty(),
    )?;
    super::name_object(inst, dev, fill.pipeline, c"generated fill")?;
    let sequences = Buffer::addressed(
        dev,
        size_of::<[Sequence; 3]>() as u64,
        vk::BufferUsageFlags::INDIRECT_BUFFER,
    )?;
    // SAFETY: the mapping holds the three sequences; no GPU work uses it yet.
    unsafe {
        std::ptr::copy_nonoverlapping(SEQUENCES.as_ptr(), sequences.mapped as *mut Sequence, 3)
    };
    // Executing with preprocessing implied needs a layout without EXPLICIT_PREPROCESS (VUID
    // vkCmdExecuteGeneratedCommandsEXT-indirectCommandsLayout-11141), and each execution
    // its own preprocess buffer (-preprocessAddress-11142): one of each per submission.
    let implicit = Generated::new(
        dev,
        &fns,
        &fill,
        &sequences,
        ext::IndirectCommandsLayoutUsageFlagsEXT::EMPTY,
    )?;
    let explicit = Generated::new(
        dev,
        &fns,
        &fill,
        &sequences,
        ext::IndirectCommandsLayoutUsageFlagsEXT::EXPLICIT_PREPROCESS,
    )?;
    let cbs = dev.command_buffers(2)?;

    clear(&target);
    dev.begin(cbs[0], vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    fill.bind(dev, cbs[0]);
    implicit.execute(cbs[0], false);
    barrier(dev, cbs[0], compute_to_host());
    dev.end(cbs[0])?;
    sub.submit("dgc", &[cbs[0]], None)?;
    let mut ok = report("dgc", verify(target.words()));

    clear(&target);
    let cb = cbs[1];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    // The preprocess snapshots the compute state (pipeline, descriptor set) of its state
    // command buffer, here the same one, which the execution then finds unchanged.
    fill.bind(dev, cb);
    explicit.preprocess(cb);
    barrier(
        dev,
        cb,
        vk::MemoryBarrier2::default()
            .src_stage_mask(ext::STAGE_COMMAND_PREPROCESS)
            .src_access_mask(ext::ACCESS_COMMAND_PREPROCESS_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::DRAW_INDIRECT)
            .dst_access_mask(vk::AccessFlags2::INDIRECT_COMMAND_READ),
    );
    explicit.execute(cb, true);
    barrier(dev, cb, compute_to_host());
    dev.end(cb)?;
    sub.submit("dgc preprocessed", &[cb], None)?;
    ok &= report("dgc preprocessed", verify(target.words()));

    // SAFETY: every submission of these command buffers was waited for.
    unsafe { d.free_command_buffers(dev.pool, &cbs) };
    implicit.destroy(dev);
    explicit.destroy(dev);
    sequences.destroy(dev);
    fill.destroy(dev);
    target.destroy(dev);
    Ok(ok)
}

fn clear(target: &Buffer) {
    // SAFETY: the mapping holds `size` bytes; no GPU work uses the buffer now.
    unsafe { std::ptr::write_bytes(target.mapped, 0, target.size as usize) };
}

/// The words the three sequences write (`tag + i` from `offset`), the rest zero.
fn verify(words: &[u32]) -> Result<()> {
    let mut want = vec![0u32; WORDS];
    for s in &SEQUENCES {
        for i in 0..s.groups[0] * GROUP {
            want[(s.offset + i) as usize] = s.tag + i;
        }
    }
    match (0..WORDS).find(|&i| words[i] != want[i]) {
        Some(i) => Err(format!(
            "word {i} is {:#x}, expected {:#x}",
            words[i], want[i]
        )),
        None => Ok(()),
    }
}

fn report(label: &str, r: Result<()>) -> bool {
    r.map_err(|e| eprintln!("utrace-workload: {label}: {e}"))
        .is_ok()
}

fn compute_to_host() -> vk::MemoryBarrier2<'static> {
    vk::MemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
        .src_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::HOST)
        .dst_access_mask(vk::AccessFlags2::HOST_READ)
}

fn barrier(dev: &Device, cb: vk::CommandBuffer, barrier: vk::MemoryBarrier2) {
    let barriers = [barrier];
    let info = vk::DependencyInfo::default().memory_barriers(&barriers);
    // SAFETY: `cb` is recording; synchronization2 is enabled.
    unsafe { dev.device.cmd_pipeline_barrier2(cb, &info) };
}
