//! The Vulkan plumbing of the workload: instance (with an optional validation messenger),
//! device, buffers and the compute pipeline of `shaders/fill.comp`.

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::{Arc, Mutex};

use ash::vk;

pub type Result<T> = std::result::Result<T, String>;

/// Turns a Vulkan error into a message naming the call.
pub fn check<T>(r: std::result::Result<T, vk::Result>, what: &str) -> Result<T> {
    r.map_err(|e| format!("{what} failed: {e}"))
}

pub const VALIDATION_LAYER: &str = "VK_LAYER_KHRONOS_validation";

pub struct Instance {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// Validation messages (warnings and errors), when validation is enabled.
    pub messages: Arc<Mutex<Vec<String>>>,
    /// Whether VK_LAYER_KHRONOS_validation is enabled.
    pub validation: bool,
    /// Leaked on purpose: the messenger's user data must outlive the instance.
    _user_data: *mut Arc<Mutex<Vec<String>>>,
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the loader passes valid callback data; `user` is the Arc leaked in `new`.
    unsafe {
        let messages = &*(user as *const Arc<Mutex<Vec<String>>>);
        let text = if (*data).p_message.is_null() {
            String::from("(no message)")
        } else {
            CStr::from_ptr((*data).p_message)
                .to_string_lossy()
                .into_owned()
        };
        if let Ok(mut m) = messages.lock() {
            m.push(format!("{severity:?}: {text}"));
        }
    }
    vk::FALSE
}

impl Instance {
    /// An instance with `layers` enabled in that order (the first is closest to the
    /// application) and `extensions`. Validation gets a messenger collecting its messages.
    pub fn new(layers: &[String], extensions: &[&CStr]) -> Result<Instance> {
        // SAFETY: loads the system's libvulkan.so.1.
        let entry =
            unsafe { ash::Entry::load() }.map_err(|e| format!("cannot load Vulkan: {e}"))?;
        let validation = layers.iter().any(|l| l == VALIDATION_LAYER);
        let layer_names: Vec<CString> = layers
            .iter()
            .map(|l| CString::new(l.as_str()).map_err(|e| e.to_string()))
            .collect::<Result<_>>()?;
        let layer_ptrs: Vec<*const c_char> = layer_names.iter().map(|l| l.as_ptr()).collect();
        let mut ext_ptrs: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
        if validation && !extensions.contains(&ash::ext::debug_utils::NAME) {
            ext_ptrs.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        let messages = Arc::new(Mutex::new(Vec::new()));
        let user_data = Box::into_raw(Box::new(Arc::clone(&messages)));
        let mut messenger_info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                    | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(on_message))
            .user_data(user_data as *mut c_void);
        let app = vk::ApplicationInfo::default()
            .application_name(c"utrace-workload")
            .api_version(vk::API_VERSION_1_3);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layer_ptrs)
            .enabled_extension_names(&ext_ptrs);
        if validation {
            info = info.push_next(&mut messenger_info);
        }
        // SAFETY: valid create info; every pointer outlives the call.
        let instance = check(
            unsafe { entry.create_instance(&info, None) },
            "vkCreateInstance",
        )?;
        let debug = if validation {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &instance);
            // SAFETY: valid create info on a live instance with the extension enabled.
            let messenger = check(
                unsafe { loader.create_debug_utils_messenger(&messenger_info, None) },
                "vkCreateDebugUtilsMessengerEXT",
            )?;
            Some((loader, messenger))
        } else {
            None
        };
        Ok(Instance {
            entry,
            instance,
            debug,
            messages,
            validation,
            _user_data: user_data,
        })
    }

    /// Of `wanted`, the device extensions the first device supports, or the validation
    /// layer provides when it is enabled (it implements VK_EXT_debug_marker itself).
    pub fn supported_device_extensions<'a>(&self, wanted: &[&'a CStr]) -> Result<Vec<&'a CStr>> {
        let physical = self.physical_device()?;
        // SAFETY: a live physical device.
        let mut props = check(
            unsafe {
                self.instance
                    .enumerate_device_extension_properties(physical)
            },
            "vkEnumerateDeviceExtensionProperties",
        )?;
        if self.validation {
            let mut count = 0;
            let f = self
                .instance
                .fp_v1_0()
                .enumerate_device_extension_properties;
            let layer = c"VK_LAYER_KHRONOS_validation";
            // SAFETY: the two-call idiom on a live physical device with an enabled layer.
            unsafe {
                if f(physical, layer.as_ptr(), &mut count, std::ptr::null_mut())
                    == vk::Result::SUCCESS
                {
                    let mut more = vec![vk::ExtensionProperties::default(); count as usize];
                    if f(physical, layer.as_ptr(), &mut count, more.as_mut_ptr())
                        == vk::Result::SUCCESS
                    {
                        more.truncate(count as usize);
                        props.extend(more);
                    }
                }
            }
        }
        Ok(wanted
            .iter()
            .copied()
            .filter(|w| props.iter().any(|p| p.extension_name_as_c_str() == Ok(*w)))
            .collect())
    }

    pub fn physical_device(&self) -> Result<vk::PhysicalDevice> {
        // SAFETY: a live instance.
        let devices = check(
            unsafe { self.instance.enumerate_physical_devices() },
            "vkEnumeratePhysicalDevices",
        )?;
        devices
            .first()
            .copied()
            .ok_or_else(|| "no Vulkan device".to_string())
    }

    pub fn destroy(self) {
        // SAFETY: every child object was destroyed by the caller.
        unsafe {
            if let Some((loader, messenger)) = &self.debug {
                loader.destroy_debug_utils_messenger(*messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

/// A logical device with one queue that can do graphics, compute and transfer.
pub struct Device {
    pub device: ash::Device,
    /// The device extensions enabled.
    pub extensions: Vec<std::ffi::CString>,
    pub physical: vk::PhysicalDevice,
    pub queue: vk::Queue,
    pub family: u32,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    pub pool: vk::CommandPool,
    pub sync2: bool,
}

impl Device {
    /// `extensions`: device extensions to enable; `sync2`: enable synchronization2 (for
    /// `vkQueueSubmit2`).
    pub fn new(inst: &Instance, extensions: &[&CStr], sync2: bool) -> Result<Device> {
        let physical = inst.physical_device()?;
        let instance = &inst.instance;
        // SAFETY: a live physical device.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let family = families
            .iter()
            .position(|f| {
                f.queue_flags
                    .contains(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)
            })
            .ok_or("no graphics+compute queue family")? as u32;
        let priorities = [1.0f32];
        let queue_info = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let ext_ptrs: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
        // Everything the scenarios record, all supported by Lavapipe.
        let mut features11 = vk::PhysicalDeviceVulkan11Features::default().multiview(true);
        let mut features12 = vk::PhysicalDeviceVulkan12Features::default()
            .draw_indirect_count(true)
            .timeline_semaphore(true);
        let mut features13 = vk::PhysicalDeviceVulkan13Features::default()
            .synchronization2(sync2)
            .dynamic_rendering(true);
        let multi_draw = extensions.contains(&ash::ext::multi_draw::NAME);
        let mut multi_draw_features =
            vk::PhysicalDeviceMultiDrawFeaturesEXT::default().multi_draw(true);
        let features = vk::PhysicalDeviceFeatures::default().multi_draw_indirect(true);
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_info)
            .enabled_features(&features)
            .enabled_extension_names(&ext_ptrs)
            .push_next(&mut features11)
            .push_next(&mut features12)
            .push_next(&mut features13);
        if multi_draw {
            info = info.push_next(&mut multi_draw_features);
        }
        // SAFETY: valid create info for this physical device.
        let device = check(
            unsafe { instance.create_device(physical, &info, None) },
            "vkCreateDevice",
        )?;
        // SAFETY: the queue was requested above.
        let queue = unsafe { device.get_device_queue(family, 0) };
        // SAFETY: a live physical device.
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: valid create info.
        let pool = check(
            unsafe { device.create_command_pool(&pool_info, None) },
            "vkCreateCommandPool",
        )?;
        Ok(Device {
            device,
            extensions: extensions.iter().map(|e| (*e).to_owned()).collect(),
            physical,
            queue,
            family,
            memory,
            pool,
            sync2,
        })
    }

    pub fn has_extension(&self, name: &CStr) -> bool {
        self.extensions.iter().any(|e| e.as_c_str() == name)
    }

    pub fn command_buffers(&self, count: u32) -> Result<Vec<vk::CommandBuffer>> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(count);
        // SAFETY: valid allocate info.
        check(
            unsafe { self.device.allocate_command_buffers(&info) },
            "vkAllocateCommandBuffers",
        )
    }

    pub fn begin(&self, cb: vk::CommandBuffer, usage: vk::CommandBufferUsageFlags) -> Result<()> {
        let info = vk::CommandBufferBeginInfo::default().flags(usage);
        // SAFETY: an idle command buffer of this device.
        check(
            unsafe { self.device.begin_command_buffer(cb, &info) },
            "vkBeginCommandBuffer",
        )
    }

    pub fn end(&self, cb: vk::CommandBuffer) -> Result<()> {
        // SAFETY: a recording command buffer.
        check(
            unsafe { self.device.end_command_buffer(cb) },
            "vkEndCommandBuffer",
        )
    }

    pub fn fence(&self) -> Result<vk::Fence> {
        // SAFETY: valid create info.
        check(
            unsafe {
                self.device
                    .create_fence(&vk::FenceCreateInfo::default(), None)
            },
            "vkCreateFence",
        )
    }

    pub fn semaphore(&self) -> Result<vk::Semaphore> {
        // SAFETY: valid create info.
        check(
            unsafe {
                self.device
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            },
            "vkCreateSemaphore",
        )
    }

    /// Waits for a fence (10 s at most) and resets it.
    pub fn wait_and_reset(&self, fence: vk::Fence) -> Result<()> {
        // SAFETY: a fence of this device.
        unsafe {
            check(
                self.device.wait_for_fences(&[fence], true, 10_000_000_000),
                "vkWaitForFences",
            )?;
            check(self.device.reset_fences(&[fence]), "vkResetFences")
        }
    }

    pub fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Result<u32> {
        (0..self.memory.memory_type_count)
            .find(|&i| {
                bits & (1 << i) != 0
                    && self.memory.memory_types[i as usize]
                        .property_flags
                        .contains(flags)
            })
            .ok_or_else(|| format!("no memory type with {flags:?}"))
    }

    pub fn destroy(self) {
        // SAFETY: the device is idle and every other object of it was destroyed.
        unsafe {
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
        }
    }
}

/// A buffer with host-visible, coherent memory, mapped.
pub struct Buffer {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub size: u64,
    pub mapped: *mut u8,
}

impl Buffer {
    pub fn new(dev: &Device, size: u64, usage: vk::BufferUsageFlags) -> Result<Buffer> {
        let d = &dev.device;
        let info = vk::BufferCreateInfo::default().size(size).usage(usage);
        // SAFETY: valid create info, allocation for the buffer's requirements, and a map of
        // the whole allocation.
        unsafe {
            let buffer = check(d.create_buffer(&info, None), "vkCreateBuffer")?;
            let reqs = d.get_buffer_memory_requirements(buffer);
            let type_index = dev.memory_type(
                reqs.memory_type_bits,
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
            )?;
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(reqs.size)
                .memory_type_index(type_index);
            let memory = check(d.allocate_memory(&alloc, None), "vkAllocateMemory")?;
            check(
                d.bind_buffer_memory(buffer, memory, 0),
                "vkBindBufferMemory",
            )?;
            let mapped = check(
                d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()),
                "vkMapMemory",
            )? as *mut u8;
            Ok(Buffer {
                buffer,
                memory,
                size,
                mapped,
            })
        }
    }

    pub fn words(&self) -> &[u32] {
        // SAFETY: the mapping covers `size` bytes and stays mapped while self lives.
        unsafe { std::slice::from_raw_parts(self.mapped as *const u32, (self.size / 4) as usize) }
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses the buffer.
        unsafe {
            dev.device.destroy_buffer(self.buffer, None);
            dev.device.free_memory(self.memory, None);
        }
    }
}

/// The compute pipeline of `shaders/fill.comp` bound to one storage buffer.
pub struct FillPipeline {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    descriptor_pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
    module: vk::ShaderModule,
}

/// Invocations per workgroup in `fill.comp`.
pub const FILL_GROUP: u32 = 64;

impl FillPipeline {
    pub fn new(dev: &Device, target: &Buffer) -> Result<FillPipeline> {
        Self::with_flags(dev, target, vk::PipelineCreateFlags::empty())
    }

    /// As [`Self::new`], with pipeline create flags (e.g. `DISPATCH_BASE`).
    pub fn with_flags(
        dev: &Device,
        target: &Buffer,
        flags: vk::PipelineCreateFlags,
    ) -> Result<FillPipeline> {
        let d = &dev.device;
        let code = ash::util::read_spv(&mut std::io::Cursor::new(
            &include_bytes!("../../shaders/fill.comp.spv")[..],
        ))
        .map_err(|e| e.to_string())?;
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let push = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(8)];
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)];
        // SAFETY: every create info is valid and every handle belongs to this device.
        unsafe {
            let module = check(
                d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None),
                "vkCreateShaderModule",
            )?;
            let set_layout = check(
                d.create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
                    None,
                ),
                "vkCreateDescriptorSetLayout",
            )?;
            let set_layouts = [set_layout];
            let layout = check(
                d.create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&set_layouts)
                        .push_constant_ranges(&push),
                    None,
                ),
                "vkCreatePipelineLayout",
            )?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            let info = [vk::ComputePipelineCreateInfo::default()
                .flags(flags)
                .stage(stage)
                .layout(layout)];
            let pipeline = d
                .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
                .map_err(|(_, e)| format!("vkCreateComputePipelines failed: {e}"))?[0];
            let descriptor_pool = check(
                d.create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                ),
                "vkCreateDescriptorPool",
            )?;
            let set = check(
                d.allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(descriptor_pool)
                        .set_layouts(&set_layouts),
                ),
                "vkAllocateDescriptorSets",
            )?[0];
            let buffer_info = [vk::DescriptorBufferInfo::default()
                .buffer(target.buffer)
                .range(vk::WHOLE_SIZE)];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&buffer_info);
            d.update_descriptor_sets(&[write], &[]);
            Ok(FillPipeline {
                pipeline,
                layout,
                set_layout,
                descriptor_pool,
                set,
                module,
            })
        }
    }

    /// Records `data[i] = i * 3 + base` for the first `count` words of the target.
    pub fn record(&self, dev: &Device, cb: vk::CommandBuffer, base: u32, count: u32) {
        let d = &dev.device;
        let push = [base.to_ne_bytes(), count.to_ne_bytes()].concat();
        // SAFETY: `cb` is recording; the pipeline, layout and set belong to this device.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                self.layout,
                0,
                &[self.set],
                &[],
            );
            d.cmd_push_constants(cb, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
            d.cmd_dispatch(cb, count.div_ceil(FILL_GROUP), 1, 1);
        }
    }

    /// Binds `pipeline` (which shares this one's layout shape) with this one's descriptor
    /// set and the push constants `data[i] = i * 3 + base` for `count` words, without
    /// dispatching.
    pub fn record_bindings(
        &self,
        dev: &Device,
        cb: vk::CommandBuffer,
        pipeline: &FillPipeline,
        base: u32,
        count: u32,
    ) {
        let d = &dev.device;
        let push = [base.to_ne_bytes(), count.to_ne_bytes()].concat();
        // SAFETY: `cb` is recording; both pipelines were made by `with_flags` for the same
        // buffer, so their layouts are compatible.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline.pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                pipeline.layout,
                0,
                &[pipeline.set],
                &[],
            );
            d.cmd_push_constants(cb, pipeline.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
        }
        let _ = self;
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses these objects.
        unsafe {
            let d = &dev.device;
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_pool(self.descriptor_pool, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_shader_module(self.module, None);
        }
    }
}

/// Checks `data[i] == i * 3 + base` for the first `count` words.
pub fn verify_fill(buffer: &Buffer, base: u32, count: u32) -> Result<()> {
    for (i, &v) in buffer.words().iter().take(count as usize).enumerate() {
        let want = i as u32 * 3 + base;
        if v != want {
            return Err(format!(
                "compute result wrong at {i}: {v} instead of {want}"
            ));
        }
    }
    Ok(())
}

/// CLOCK_MONOTONIC in nanoseconds (Lavapipe's device timestamps use the same clock).
pub fn monotonic_ns() -> u64 {
    // `Instant` reads CLOCK_MONOTONIC too but hides the value, so ask libc directly.
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut [i64; 2]) -> i32;
    }
    const CLOCK_MONOTONIC: i32 = 1;
    let mut ts = [0i64; 2];
    // SAFETY: clock_gettime writes a struct timespec (two i64 on x86_64/aarch64 Linux).
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    ts[0] as u64 * 1_000_000_000 + ts[1] as u64
}
