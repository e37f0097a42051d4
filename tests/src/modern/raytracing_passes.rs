//! The work of the `raytracing` scenario: the objects it creates, its four submissions
//! ("rt blas", "rt compact+tlas", "rt frame", "rt indirect") and their barriers.

use ash::khr::{acceleration_structure, ray_tracing_pipeline};
use ash::vk;

use super::image::check_image;
use super::pipeline::Tracer;
use super::structures::{Aligned, Scene, SIZE};
use crate::gpu_work::graphics;
use crate::submitter::Submitter;
use crate::vk::{check, Buffer, Device, Instance, Result};

/// Everything the scenario creates.
pub struct Objects {
    structure_fns: acceleration_structure::Device,
    pipeline_fns: ray_tracing_pipeline::Device,
    scene: Scene,
    tracer: Tracer,
    readback: Buffer,
    query: vk::QueryPool,
    /// {64, 64, 1} for vkCmdTraceRaysIndirectKHR, when the device can trace indirectly.
    indirect: Option<Aligned>,
    cbs: Vec<vk::CommandBuffer>,
}

impl Objects {
    pub fn new(inst: &Instance, dev: &Device, indirect: bool) -> Result<Objects> {
        let structure_fns = acceleration_structure::Device::new(&inst.instance, &dev.device);
        let pipeline_fns = ray_tracing_pipeline::Device::new(&inst.instance, &dev.device);
        let scene = Scene::new(dev, &structure_fns, scratch_alignment(inst, dev))?;
        let tracer = Tracer::new(inst, dev, &pipeline_fns, scene.tlas.handle)?;
        let readback = Buffer::new(
            dev,
            u64::from(SIZE * SIZE * 4),
            vk::BufferUsageFlags::TRANSFER_DST,
        )?;
        let query_info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR)
            .query_count(1);
        // SAFETY: valid create info; accelerationStructure is enabled.
        let query = check(
            unsafe { dev.device.create_query_pool(&query_info, None) },
            "vkCreateQueryPool",
        )?;
        let indirect = if indirect {
            let buffer = Aligned::new(dev, 12, vk::BufferUsageFlags::INDIRECT_BUFFER, 4)?;
            let command: Vec<u8> = [SIZE, SIZE, 1]
                .iter()
                .flat_map(|w| w.to_ne_bytes())
                .collect();
            buffer.write(0, &command);
            Some(buffer)
        } else {
            None
        };
        let cbs = dev.command_buffers(4)?;
        Ok(Objects {
            structure_fns,
            pipeline_fns,
            scene,
            tracer,
            readback,
            query,
            indirect,
            cbs,
        })
    }

    pub fn submit_all(&mut self, dev: &Device, sub: &mut Submitter) -> Result<bool> {
        self.build_blas(dev, sub)?;
        self.compact_and_build_tlas(dev, sub)?;
        let mut ok = self.frame(dev, sub)?;
        if self.indirect.is_some() {
            ok &= self.frame_indirect(dev, sub)?;
        } else {
            eprintln!("raytracing: no rayTracingPipelineTraceRaysIndirect, no \"rt indirect\"");
        }
        Ok(ok)
    }

    /// "rt blas": build, then the compacted size into the query.
    fn build_blas(&self, dev: &Device, sub: &mut Submitter) -> Result<()> {
        let (d, cb) = (&dev.device, self.cbs[0]);
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        // SAFETY: `cb` is recording, outside any render pass; the pool has 1 query.
        unsafe { d.cmd_reset_query_pool(cb, self.query, 0, 1) };
        self.scene.record_blas_build(&self.structure_fns, cb)?;
        barrier(dev, cb, &[structure_written(AS_BUILD)], &[]);
        // SAFETY: the structure was built (and the build made visible) above; the query
        // was reset above.
        unsafe {
            self.structure_fns
                .cmd_write_acceleration_structures_properties(
                    cb,
                    &[self.scene.blas()?],
                    vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR,
                    self.query,
                    0,
                )
        };
        dev.end(cb)?;
        sub.submit("rt blas", &[cb], None)
    }

    /// The compact structure sized from the query; "rt compact+tlas": the copy, then the
    /// top-level build over two instances of it. The structure as built goes afterwards.
    fn compact_and_build_tlas(&mut self, dev: &Device, sub: &mut Submitter) -> Result<()> {
        let mut size = [0u64; 1];
        let flags = vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT;
        // SAFETY: the query was written by the submission just waited for; one 64-bit result.
        let read = unsafe {
            dev.device
                .get_query_pool_results(self.query, 0, &mut size, flags)
        };
        check(read, "vkGetQueryPoolResults")?;
        if size[0] == 0 {
            return Err("the BLAS's compacted size reads 0".into());
        }
        self.scene.make_compact(dev, &self.structure_fns, size[0])?;
        let cb = self.cbs[1];
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        self.scene.record_compaction(&self.structure_fns, cb)?;
        barrier(dev, cb, &[structure_written(AS_BUILD)], &[]);
        let build = vk::BuildAccelerationStructureModeKHR::BUILD;
        self.scene.record_tlas(&self.structure_fns, cb, build);
        dev.end(cb)?;
        sub.submit("rt compact+tlas", &[cb], None)?;
        self.scene.drop_original(dev, &self.structure_fns);
        Ok(())
    }

    /// "rt frame": the top-level update, the trace, the readback; then the check.
    fn frame(&self, dev: &Device, sub: &mut Submitter) -> Result<bool> {
        let cb = self.cbs[2];
        let image = self.tracer.image.image;
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        // The last build (previous submission) before the update; the image into GENERAL.
        let to_general = image_barrier(
            image,
            (vk::ImageLayout::UNDEFINED, vk::ImageLayout::GENERAL),
            (vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE),
            (RT_SHADER, vk::AccessFlags2::SHADER_STORAGE_WRITE),
        );
        barrier(dev, cb, &[structure_written(AS_BUILD)], &[to_general]);
        let update = vk::BuildAccelerationStructureModeKHR::UPDATE;
        self.scene.record_tlas(&self.structure_fns, cb, update);
        barrier(dev, cb, &[structure_written(RT_SHADER)], &[]);
        self.tracer.record_bind(dev, cb);
        let [raygen, miss, hit, callable] = &self.tracer.regions;
        // SAFETY: `cb` is recording with the ray tracing pipeline and its set bound; the
        // regions point into the live shader binding table.
        unsafe {
            self.pipeline_fns
                .cmd_trace_rays(cb, raygen, miss, hit, callable, SIZE, SIZE, 1)
        };
        self.record_readback(dev, cb);
        dev.end(cb)?;
        sub.submit("rt frame", &[cb], None)?;
        check_image(self.readback.words(), "rt frame")
    }

    /// "rt indirect": the image cleared, the same rays traced through the indirect buffer,
    /// the readback; then the check.
    fn frame_indirect(&self, dev: &Device, sub: &mut Submitter) -> Result<bool> {
        let address = self.indirect.as_ref().ok_or("no indirect buffer")?.address;
        let (d, cb) = (&dev.device, self.cbs[3]);
        let image = self.tracer.image.image;
        let (source, destination) = (
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        );
        let transfer = vk::PipelineStageFlags2::ALL_TRANSFER;
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        // The clear after the last frame's copy out of the image.
        let before_clear = image_barrier(
            image,
            (source, destination),
            (transfer, vk::AccessFlags2::NONE),
            (transfer, vk::AccessFlags2::TRANSFER_WRITE),
        );
        barrier(dev, cb, &[], &[before_clear]);
        // A value neither shader writes: a pixel the rays miss shows up.
        let clear = vk::ClearColorValue {
            uint32: [0xdead_beef; 4],
        };
        let range = graphics::range(vk::ImageAspectFlags::COLOR);
        // SAFETY: `cb` is recording; the image has TRANSFER_DST usage and is in that layout.
        unsafe { d.cmd_clear_color_image(cb, image, destination, &clear, &[range]) };
        let after_clear = image_barrier(
            image,
            (destination, vk::ImageLayout::GENERAL),
            (transfer, vk::AccessFlags2::TRANSFER_WRITE),
            (RT_SHADER, vk::AccessFlags2::SHADER_STORAGE_WRITE),
        );
        barrier(dev, cb, &[], &[after_clear]);
        self.tracer.record_bind(dev, cb);
        let [raygen, miss, hit, callable] = &self.tracer.regions;
        // SAFETY: as in `frame`; `address` holds a VkTraceRaysIndirectCommandKHR written by
        // the host before submission, and rayTracingPipelineTraceRaysIndirect is enabled.
        unsafe {
            self.pipeline_fns
                .cmd_trace_rays_indirect(cb, raygen, miss, hit, callable, address)
        };
        self.record_readback(dev, cb);
        dev.end(cb)?;
        sub.submit("rt indirect", &[cb], None)?;
        check_image(self.readback.words(), "rt indirect")
    }

    /// The traced image (GENERAL, left TRANSFER_SRC_OPTIMAL) copied into the readback
    /// buffer, made visible to the host.
    fn record_readback(&self, dev: &Device, cb: vk::CommandBuffer) {
        let transfer = vk::PipelineStageFlags2::ALL_TRANSFER;
        let source = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
        let traced = image_barrier(
            self.tracer.image.image,
            (vk::ImageLayout::GENERAL, source),
            (RT_SHADER, vk::AccessFlags2::SHADER_STORAGE_WRITE),
            (transfer, vk::AccessFlags2::TRANSFER_READ),
        );
        barrier(dev, cb, &[], &[traced]);
        graphics::copy_to_buffer(dev, cb, self.tracer.image.image, self.readback.buffer);
        let copied = memory_barrier(
            (transfer, vk::AccessFlags2::TRANSFER_WRITE),
            (vk::PipelineStageFlags2::HOST, vk::AccessFlags2::HOST_READ),
        );
        barrier(dev, cb, &[copied], &[]);
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: the device is idle; the command buffers and the pool are this device's.
        unsafe {
            dev.device.free_command_buffers(dev.pool, &self.cbs);
            dev.device.destroy_query_pool(self.query, None);
        }
        if let Some(indirect) = self.indirect {
            indirect.buffer.destroy(dev);
        }
        self.readback.destroy(dev);
        self.tracer.destroy(dev);
        self.scene.destroy(dev, &self.structure_fns);
    }
}

const AS_BUILD: vk::PipelineStageFlags2 = vk::PipelineStageFlags2::ACCELERATION_STRUCTURE_BUILD_KHR;
const RT_SHADER: vk::PipelineStageFlags2 = vk::PipelineStageFlags2::RAY_TRACING_SHADER_KHR;

fn scratch_alignment(inst: &Instance, dev: &Device) -> u64 {
    let mut props = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
    // SAFETY: a live physical device that has VK_KHR_acceleration_structure.
    unsafe {
        inst.instance
            .get_physical_device_properties2(dev.physical, &mut props2)
    };
    u64::from(
        props
            .min_acceleration_structure_scratch_offset_alignment
            .max(1),
    )
}

/// An acceleration structure build or copy, before structures are read at `stage` (and,
/// by further builds, written).
fn structure_written(stage: vk::PipelineStageFlags2) -> vk::MemoryBarrier2<'static> {
    let mut access = vk::AccessFlags2::ACCELERATION_STRUCTURE_READ_KHR;
    if stage == AS_BUILD {
        access |= vk::AccessFlags2::ACCELERATION_STRUCTURE_WRITE_KHR;
    }
    memory_barrier(
        (AS_BUILD, vk::AccessFlags2::ACCELERATION_STRUCTURE_WRITE_KHR),
        (stage, access),
    )
}

type Scope = (vk::PipelineStageFlags2, vk::AccessFlags2);

fn memory_barrier(src: Scope, dst: Scope) -> vk::MemoryBarrier2<'static> {
    vk::MemoryBarrier2::default()
        .src_stage_mask(src.0)
        .src_access_mask(src.1)
        .dst_stage_mask(dst.0)
        .dst_access_mask(dst.1)
}

/// A barrier on the whole color image, from layout `old` to `new`.
fn image_barrier(
    image: vk::Image,
    (old, new): (vk::ImageLayout, vk::ImageLayout),
    src: Scope,
    dst: Scope,
) -> vk::ImageMemoryBarrier2<'static> {
    vk::ImageMemoryBarrier2::default()
        .src_stage_mask(src.0)
        .src_access_mask(src.1)
        .dst_stage_mask(dst.0)
        .dst_access_mask(dst.1)
        .old_layout(old)
        .new_layout(new)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(graphics::range(vk::ImageAspectFlags::COLOR))
}

fn barrier(
    dev: &Device,
    cb: vk::CommandBuffer,
    memory: &[vk::MemoryBarrier2<'_>],
    images: &[vk::ImageMemoryBarrier2<'_>],
) {
    let info = vk::DependencyInfo::default()
        .memory_barriers(memory)
        .image_memory_barriers(images);
    // SAFETY: `cb` is recording; synchronization2 is enabled; every stage named is one the
    // device's enabled features allow.
    unsafe { dev.device.cmd_pipeline_barrier2(cb, &info) };
}
