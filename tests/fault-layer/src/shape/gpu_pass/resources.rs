//! A device's objects for the GPU side of the shape: the compute pipeline (one push
//! descriptor set: the copied results and the log) and the host-visible log the pass appends
//! its (ticks, ns) pairs to, read back at `vkDestroyDevice`.

use std::ffi::c_void;

use ash::vk;

const SHADER: &[u8] = include_bytes!("../../../../../shaders/shape_ticks.comp.spv");
/// Pairs the log holds; later ones are counted but not kept.
const LOG_PAIRS: u32 = 1 << 18;
/// The log's header: count, capacity and two words of padding.
const HEADER_WORDS: usize = 4;

pub struct LogBuffer {
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    mapped: *mut u32,
}

pub struct DeviceShape {
    pub fns: ash::Device,
    pub push: ash::khr::push_descriptor::DeviceFn,
    set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    pub pipeline: vk::Pipeline,
    pub log: LogBuffer,
}

// SAFETY: the mapping is written only by the GPU and read at `vkDestroyDevice`, when the
// application guarantees the device idle; Vulkan objects may be used from any thread.
unsafe impl Send for DeviceShape {}
// SAFETY: as above; the handles are plain values.
unsafe impl Sync for DeviceShape {}

impl DeviceShape {
    /// # Safety
    /// `device` was just created with `VK_KHR_push_descriptor`; `gdpa` is the next layer's.
    pub unsafe fn create(
        device: vk::Device,
        gdpa: vk::PFN_vkGetDeviceProcAddr,
        memory: &vk::PhysicalDeviceMemoryProperties,
    ) -> Result<DeviceShape, vk::Result> {
        let load = |name: &std::ffi::CStr| {
            // SAFETY: the next layer's GDPA on the live device.
            unsafe {
                std::mem::transmute::<vk::PFN_vkVoidFunction, *const c_void>(gdpa(
                    device,
                    name.as_ptr(),
                ))
            }
        };
        // SAFETY: the next layer's functions of the live device.
        let fns = unsafe { ash::Device::load_with(load, device) };
        let push = ash::khr::push_descriptor::DeviceFn::load(load);
        // SAFETY: valid create infos on the live device; on failure what was made is freed.
        unsafe {
            let words = ash::util::read_spv(&mut std::io::Cursor::new(SHADER))
                .map_err(|_| vk::Result::ERROR_INITIALIZATION_FAILED)?;
            let module = fns
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)?;
            let bindings = [0, 1].map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            });
            let set_layout = fns.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default()
                    .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
                    .bindings(&bindings),
                None,
            )?;
            let ranges = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .size(44)];
            let set_layouts = [set_layout];
            let layout = fns.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&set_layouts)
                    .push_constant_ranges(&ranges),
                None,
            )?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            let info = vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout);
            let pipeline = fns
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)?[0];
            fns.destroy_shader_module(module, None);
            let log = LogBuffer::create(&fns, memory)?;
            Ok(DeviceShape {
                fns,
                push,
                set_layout,
                layout,
                pipeline,
                log,
            })
        }
    }

    /// The pairs the GPU logged. Call when the device is idle.
    pub fn logged(&self) -> Vec<(u64, u64)> {
        // SAFETY: the mapping holds the header and LOG_PAIRS pairs of four words; the
        // device is idle.
        unsafe {
            let count = self.log.mapped.read_volatile().min(LOG_PAIRS) as usize;
            let pairs = std::slice::from_raw_parts(self.log.mapped.add(HEADER_WORDS), count * 4);
            pairs
                .chunks_exact(4)
                .map(|w| {
                    let ticks = u64::from(w[0]) | u64::from(w[1]) << 32;
                    let ns = u64::from(w[2]) | u64::from(w[3]) << 32;
                    (ticks, ns)
                })
                .collect()
        }
    }

    /// # Safety
    /// The device is idle; called once.
    pub unsafe fn destroy(&self) {
        // SAFETY: as the caller promises.
        unsafe {
            self.fns.destroy_pipeline(self.pipeline, None);
            self.fns.destroy_pipeline_layout(self.layout, None);
            self.fns
                .destroy_descriptor_set_layout(self.set_layout, None);
            self.fns.destroy_buffer(self.log.buffer, None);
            self.fns.free_memory(self.log.memory, None);
        }
    }
}

impl LogBuffer {
    /// # Safety
    /// `fns` are a live device's.
    unsafe fn create(
        fns: &ash::Device,
        props: &vk::PhysicalDeviceMemoryProperties,
    ) -> Result<LogBuffer, vk::Result> {
        let size = (HEADER_WORDS as u64 + u64::from(LOG_PAIRS) * 4) * 4;
        // SAFETY: valid create infos on the live device.
        unsafe {
            let buffer = fns.create_buffer(
                &vk::BufferCreateInfo::default()
                    .size(size)
                    .usage(vk::BufferUsageFlags::STORAGE_BUFFER),
                None,
            )?;
            let reqs = fns.get_buffer_memory_requirements(buffer);
            let wanted =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let index = (0..props.memory_type_count)
                .find(|&i| {
                    reqs.memory_type_bits & (1 << i) != 0
                        && props.memory_types[i as usize]
                            .property_flags
                            .contains(wanted)
                })
                .ok_or(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY)?;
            let memory = fns.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(reqs.size)
                    .memory_type_index(index),
                None,
            )?;
            fns.bind_buffer_memory(buffer, memory, 0)?;
            let mapped = fns
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())?
                .cast::<u32>();
            mapped.write_volatile(0);
            mapped.add(1).write_volatile(LOG_PAIRS);
            Ok(LogBuffer {
                buffer,
                memory,
                mapped,
            })
        }
    }
}
