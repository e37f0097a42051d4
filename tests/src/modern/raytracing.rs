//! The `raytracing` scenario: a renderer's ray-traced pass (Lavapipe 25.0). Submissions, in
//! order: "rt blas" builds a bottom-level structure of two triangle geometries and queries
//! its compacted size; "rt compact+tlas" compacts it and builds a top-level structure of two
//! instances of the copy; "rt frame" updates the top-level structure in place, traces one
//! ray per pixel of a 64x64 storage image with the pipeline "shadow rays" and reads the
//! image back; where rayTracingPipelineTraceRaysIndirect is supported, "rt indirect" clears
//! the image and traces the same rays through vkCmdTraceRaysIndirectKHR. Each read-back
//! image is compared, pixel for pixel, with the one the host works out.

#[path = "raytracing_image.rs"]
mod image;
#[path = "raytracing_passes.rs"]
mod passes;
#[path = "raytracing_pipeline.rs"]
mod pipeline;
#[path = "raytracing_structures.rs"]
mod structures;

use std::ffi::{c_void, CStr};

use ash::khr::{
    acceleration_structure, deferred_host_operations, ray_tracing_maintenance1,
    ray_tracing_pipeline,
};
use ash::vk;

use crate::gpu_work::graphics;
use crate::submitter::Submitter;
use crate::vk::{check, Device, Extra, Instance, Result};
use passes::Objects;
use structures::SIZE;

const REQUIRED: [&CStr; 3] = [
    acceleration_structure::NAME,
    ray_tracing_pipeline::NAME,
    deferred_host_operations::NAME,
];

// The storage image is a `graphics::Image`, whose side is graphics::SIZE.
const _: () = assert!(SIZE == graphics::SIZE);

/// What the driver offers of what the scenario uses.
struct Support {
    acceleration_structure: bool,
    pipeline: bool,
    indirect: bool,
    /// VK_KHR_ray_tracing_maintenance1 and its rayTracingMaintenance1 feature.
    maintenance1: bool,
}

fn support(inst: &Instance, physical: vk::PhysicalDevice) -> Result<Support> {
    let offered = super::offered_extensions(inst, physical)?;
    let has = |name: &CStr| super::offers(&offered, name);
    let missing: Vec<_> = REQUIRED
        .iter()
        .filter(|name| !has(name))
        .map(|name| name.to_string_lossy())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the raytracing scenario needs {}, which the device lacks (Lavapipe 25.0 has them)",
            missing.join(", ")
        ));
    }
    let mut structures = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default();
    let mut pipeline = vk::PhysicalDeviceRayTracingPipelineFeaturesKHR::default();
    let mut maintenance1 = vk::PhysicalDeviceRayTracingMaintenance1FeaturesKHR::default();
    let offers_maintenance1 = has(ray_tracing_maintenance1::NAME);
    let mut features = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut structures)
        .push_next(&mut pipeline);
    if offers_maintenance1 {
        features = features.push_next(&mut maintenance1);
    }
    // SAFETY: the chain holds only structures of extensions the device offers.
    unsafe {
        inst.instance
            .get_physical_device_features2(physical, &mut features)
    };
    Ok(Support {
        acceleration_structure: structures.acceleration_structure == vk::TRUE,
        pipeline: pipeline.ray_tracing_pipeline == vk::TRUE,
        indirect: pipeline.ray_tracing_pipeline_trace_rays_indirect == vk::TRUE,
        maintenance1: offers_maintenance1 && maintenance1.ray_tracing_maintenance1 == vk::TRUE,
    })
}

/// A device with acceleration structures, ray tracing pipelines (indirect tracing and
/// VK_KHR_ray_tracing_maintenance1 where offered) and buffer device addresses.
pub fn device(inst: &Instance) -> Result<Device> {
    let physical = inst.physical_device()?;
    let offered = support(inst, physical)?;
    if !offered.acceleration_structure || !offered.pipeline {
        return Err(
            "the raytracing scenario needs the accelerationStructure and \
                    rayTracingPipeline features, which the device lacks"
                .into(),
        );
    }
    let mut extensions = REQUIRED.to_vec();
    let mut maintenance1 = vk::PhysicalDeviceRayTracingMaintenance1FeaturesKHR::default()
        .ray_tracing_maintenance1(true);
    let mut pipeline = vk::PhysicalDeviceRayTracingPipelineFeaturesKHR::default()
        .ray_tracing_pipeline(true)
        .ray_tracing_pipeline_trace_rays_indirect(offered.indirect);
    if offered.maintenance1 {
        extensions.push(ray_tracing_maintenance1::NAME);
        pipeline.p_next = &mut maintenance1 as *mut _ as *mut c_void;
    }
    let mut structures =
        vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default().acceleration_structure(true);
    structures.p_next = &mut pipeline as *mut _ as *mut c_void;
    let extra = Extra {
        buffer_device_address: true,
        next: &mut structures as *mut _ as *mut c_void,
        ..Default::default()
    };
    Device::new_with(inst, &extensions, true, extra)
}

/// Records, submits and checks the scenario's work; destroys what it made, whatever the
/// outcome.
pub fn run(inst: &Instance, dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let indirect = support(inst, dev.physical)?.indirect;
    let mut objects = Objects::new(inst, dev, indirect)?;
    let outcome = objects.submit_all(dev, sub);
    // SAFETY: a live device; nothing may be pending when the objects go.
    let idle = unsafe { dev.device.device_wait_idle() };
    objects.destroy(dev);
    check(idle, "vkDeviceWaitIdle")?;
    outcome
}
