//! The ray tracing pipeline of the `raytracing` scenario ("shadow rays": `raytrace.rgen`,
//! `raytrace.rmiss`, `raytrace.rchit`), its descriptor set (the top-level structure and a
//! 64x64 R32_UINT storage image) and its shader binding table.

use ash::vk;

use super::structures::Aligned;
use crate::gpu_work::graphics::{range, Image};
use crate::modern::name_object;
use crate::vk::{check, destroy_shader_modules, shader_modules, Device, Instance, Result};

/// The storage image's format: one word per pixel, read back as is.
pub const FORMAT: vk::Format = vk::Format::R32_UINT;

pub struct Tracer {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    table: Aligned,
    /// The shader binding table's raygen, miss, hit and (empty) callable regions.
    pub regions: [vk::StridedDeviceAddressRegionKHR; 4],
    /// The storage image the rays write (its view is the image's own `view`).
    pub image: Image,
}

impl Tracer {
    /// The pipeline (named "shadow rays"), its table, the image, and the descriptor set
    /// pointing at `tlas` and the image.
    pub fn new(
        inst: &Instance,
        dev: &Device,
        fns: &ash::khr::ray_tracing_pipeline::Device,
        tlas: vk::AccelerationStructureKHR,
    ) -> Result<Tracer> {
        let d = &dev.device;
        let bindings = [
            vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::RAYGEN_KHR),
            vk::DescriptorSetLayoutBinding::default()
                .binding(1)
                .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::RAYGEN_KHR),
        ];
        // SAFETY: valid create info on a live device.
        let set_layout = check(
            unsafe {
                d.create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
            },
            "vkCreateDescriptorSetLayout",
        )?;
        let set_layouts = [set_layout];
        // SAFETY: as above.
        let layout = check(
            unsafe {
                d.create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts),
                    None,
                )
            },
            "vkCreatePipelineLayout",
        )?;
        let pipeline = create_pipeline(dev, fns, layout)?;
        name_object(inst, dev, pipeline, c"shadow rays")?;
        let (table, regions) = binding_table(inst, dev, fns, pipeline)?;
        let mut image = Image::new(
            dev,
            FORMAT,
            vk::ImageUsageFlags::STORAGE
                | vk::ImageUsageFlags::TRANSFER_SRC
                | vk::ImageUsageFlags::TRANSFER_DST,
            vk::SampleCountFlags::TYPE_1,
        )?;
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image.image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(FORMAT)
            .subresource_range(range(vk::ImageAspectFlags::COLOR));
        // SAFETY: a view of a live image with STORAGE usage; `Image::destroy` destroys it.
        image.view = check(
            unsafe { d.create_image_view(&view_info, None) },
            "vkCreateImageView",
        )?;
        let (pool, set) = descriptor_set(dev, set_layout, tlas, image.view)?;
        Ok(Tracer {
            pipeline,
            layout,
            set_layout,
            pool,
            set,
            table,
            regions,
            image,
        })
    }

    /// vkCmdBindPipeline and vkCmdBindDescriptorSets at the ray tracing bind point.
    pub fn record_bind(&self, dev: &Device, cb: vk::CommandBuffer) {
        let point = vk::PipelineBindPoint::RAY_TRACING_KHR;
        // SAFETY: `cb` is recording; the set was made for this pipeline's layout.
        unsafe {
            dev.device.cmd_bind_pipeline(cb, point, self.pipeline);
            dev.device
                .cmd_bind_descriptor_sets(cb, point, self.layout, 0, &[self.set], &[]);
        }
    }

    pub fn destroy(self, dev: &Device) {
        let d = &dev.device;
        // SAFETY: no pending work uses these objects.
        unsafe {
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
        }
        self.table.buffer.destroy(dev);
        self.image.destroy(dev);
    }
}

/// Three groups: 0 raygen, 1 miss, 2 a triangles hit group with the closest-hit shader.
fn create_pipeline(
    dev: &Device,
    fns: &ash::khr::ray_tracing_pipeline::Device,
    layout: vk::PipelineLayout,
) -> Result<vk::Pipeline> {
    let modules = shader_modules(
        dev,
        &[
            include_bytes!("../../../shaders/raytrace.rgen.spv"),
            include_bytes!("../../../shaders/raytrace.rmiss.spv"),
            include_bytes!("../../../shaders/raytrace.rchit.spv"),
        ],
    )?;
    let kinds = [
        vk::ShaderStageFlags::RAYGEN_KHR,
        vk::ShaderStageFlags::MISS_KHR,
        vk::ShaderStageFlags::CLOSEST_HIT_KHR,
    ];
    let stages: Vec<_> = modules
        .iter()
        .zip(kinds)
        .map(|(&module, stage)| {
            vk::PipelineShaderStageCreateInfo::default()
                .stage(stage)
                .module(module)
                .name(c"main")
        })
        .collect();
    let general = |shader| {
        vk::RayTracingShaderGroupCreateInfoKHR::default()
            .ty(vk::RayTracingShaderGroupTypeKHR::GENERAL)
            .general_shader(shader)
            .closest_hit_shader(vk::SHADER_UNUSED_KHR)
            .any_hit_shader(vk::SHADER_UNUSED_KHR)
            .intersection_shader(vk::SHADER_UNUSED_KHR)
    };
    let groups = [
        general(0),
        general(1),
        vk::RayTracingShaderGroupCreateInfoKHR::default()
            .ty(vk::RayTracingShaderGroupTypeKHR::TRIANGLES_HIT_GROUP)
            .general_shader(vk::SHADER_UNUSED_KHR)
            .closest_hit_shader(2)
            .any_hit_shader(vk::SHADER_UNUSED_KHR)
            .intersection_shader(vk::SHADER_UNUSED_KHR),
    ];
    let info = vk::RayTracingPipelineCreateInfoKHR::default()
        .stages(&stages)
        .groups(&groups)
        .max_pipeline_ray_recursion_depth(1)
        .layout(layout);
    // SAFETY: valid create info (no deferred operation, no cache); rayTracingPipeline is
    // enabled.
    let created = unsafe {
        fns.create_ray_tracing_pipelines(
            vk::DeferredOperationKHR::null(),
            vk::PipelineCache::null(),
            &[info],
            None,
        )
    };
    // Pipeline creation has returned; the modules are no longer needed.
    destroy_shader_modules(dev, &modules);
    created
        .map(|p| p[0])
        .map_err(|(_, e)| format!("vkCreateRayTracingPipelinesKHR failed: {e}"))
}

/// The shader binding table: one record per group, each region starting at a multiple of
/// shaderGroupBaseAlignment, records spaced by the handle size rounded up to
/// shaderGroupHandleAlignment.
fn binding_table(
    inst: &Instance,
    dev: &Device,
    fns: &ash::khr::ray_tracing_pipeline::Device,
    pipeline: vk::Pipeline,
) -> Result<(Aligned, [vk::StridedDeviceAddressRegionKHR; 4])> {
    let mut props = vk::PhysicalDeviceRayTracingPipelinePropertiesKHR::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
    // SAFETY: a live physical device that has VK_KHR_ray_tracing_pipeline.
    unsafe {
        inst.instance
            .get_physical_device_properties2(dev.physical, &mut props2)
    };
    let handle_size = props.shader_group_handle_size as u64;
    let stride = handle_size.next_multiple_of(props.shader_group_handle_alignment as u64);
    let base = props.shader_group_base_alignment as u64;
    let region = stride.next_multiple_of(base);
    // SAFETY: the pipeline has 3 groups; the size is 3 handles.
    let handles = check(
        unsafe {
            fns.get_ray_tracing_shader_group_handles(pipeline, 0, 3, 3 * handle_size as usize)
        },
        "vkGetRayTracingShaderGroupHandlesKHR",
    )?;
    let table = Aligned::new(
        dev,
        3 * region,
        vk::BufferUsageFlags::SHADER_BINDING_TABLE_KHR,
        base,
    )?;
    for (group, handle) in handles.chunks(handle_size as usize).enumerate() {
        table.write(group as u64 * region, handle);
    }
    let at = |group: u64| {
        vk::StridedDeviceAddressRegionKHR::default()
            .device_address(table.address + group * region)
            .stride(stride)
            .size(stride)
    };
    let regions = [
        at(0),
        at(1),
        at(2),
        vk::StridedDeviceAddressRegionKHR::default(),
    ];
    Ok((table, regions))
}

/// The set: binding 0 the top-level structure, binding 1 the storage image (GENERAL).
fn descriptor_set(
    dev: &Device,
    set_layout: vk::DescriptorSetLayout,
    tlas: vk::AccelerationStructureKHR,
    view: vk::ImageView,
) -> Result<(vk::DescriptorPool, vk::DescriptorSet)> {
    let d = &dev.device;
    let sizes = [
        vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)
            .descriptor_count(1),
        vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_IMAGE)
            .descriptor_count(1),
    ];
    let pool_info = vk::DescriptorPoolCreateInfo::default()
        .max_sets(1)
        .pool_sizes(&sizes);
    // SAFETY: valid create info on a live device.
    let pool = check(
        unsafe { d.create_descriptor_pool(&pool_info, None) },
        "vkCreateDescriptorPool",
    )?;
    let set_layouts = [set_layout];
    let alloc = vk::DescriptorSetAllocateInfo::default()
        .descriptor_pool(pool)
        .set_layouts(&set_layouts);
    // SAFETY: the pool has room for this one set.
    let set = check(
        unsafe { d.allocate_descriptor_sets(&alloc) },
        "vkAllocateDescriptorSets",
    )?[0];
    let structures = [tlas];
    let mut structure_write = vk::WriteDescriptorSetAccelerationStructureKHR::default()
        .acceleration_structures(&structures);
    let image_info = [vk::DescriptorImageInfo::default()
        .image_view(view)
        .image_layout(vk::ImageLayout::GENERAL)];
    let writes = [
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)
            .descriptor_count(1)
            .push_next(&mut structure_write),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(1)
            .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
            .image_info(&image_info),
    ];
    // SAFETY: the set, structure and view are live; the set is not in use.
    unsafe { d.update_descriptor_sets(&writes, &[]) };
    Ok((pool, set))
}
