use std::ffi::{c_char, CStr};

use ash::vk;

use super::{check, Instance, Result};

/// Whether [`Device::new`] names its Vulkan 1.0 features in a `VkPhysicalDeviceFeatures2`
/// of its chain instead of `pEnabledFeatures` (the workload's `--features2`).
static FEATURES_IN_CHAIN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Devices made from now on name their 1.0 features in a `VkPhysicalDeviceFeatures2`.
pub fn name_features_in_chain() {
    FEATURES_IN_CHAIN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether [`Device::new`] enables `pipelineStatisticsQuery` itself (the workload's
/// `--statistics`), as an application that makes its own statistics queries must.
static STATISTICS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Devices made from now on enable `pipelineStatisticsQuery`.
pub fn enable_statistics() {
    STATISTICS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// A logical device with one queue that can do graphics, compute and transfer (and one of
/// a transfer-only family and one of a compute family without graphics, where the device
/// has them).
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
    /// drawIndirectCount (optional in Vulkan 1.2) is enabled.
    pub draw_indirect_count: bool,
    /// VK_EXT_multi_draw and its multiDraw feature are enabled.
    pub multi_draw: bool,
    /// A transfer-only family's queue, where the device has such a family.
    pub transfer: Option<(u32, vk::Queue)>,
    /// A queue of a compute family without graphics, where the device has such a family.
    pub compute: Option<(u32, vk::Queue)>,
    /// How long [`Self::wait_and_reset`] waits for a fence: 10 s, a guard against a hang
    /// that still leaves the harness's own limit to the longest work (a million draws).
    pub fence_timeout_ns: std::sync::atomic::AtomicU64,
}

/// What a scenario of newer GPU work (ray tracing, mesh shading, shader objects, generated
/// commands) enables beyond what [`Device::new`] does.
pub struct Extra {
    /// Vulkan 1.2's bufferDeviceAddress (acceleration structures, shader binding tables and
    /// generated commands address their buffers by device address).
    pub buffer_device_address: bool,
    /// Vulkan 1.3's maintenance4 (mesh shaders' local size ids need it).
    pub maintenance4: bool,
    /// The head of the scenario's own chain of feature structures (null-terminated), or
    /// null: linked into the `VkDeviceCreateInfo` after the core ones.
    pub next: *mut std::ffi::c_void,
}

impl Default for Extra {
    fn default() -> Self {
        Extra {
            buffer_device_address: false,
            maintenance4: false,
            next: std::ptr::null_mut(),
        }
    }
}

impl Device {
    /// `extensions`: device extensions to enable; `sync2`: enable synchronization2 (for
    /// `vkQueueSubmit2`).
    pub fn new(inst: &Instance, extensions: &[&CStr], sync2: bool) -> Result<Device> {
        Self::new_with(inst, extensions, sync2, Extra::default())
    }

    /// [`Device::new`], with the features of `extra` enabled too.
    pub fn new_with(
        inst: &Instance,
        extensions: &[&CStr],
        sync2: bool,
        extra: Extra,
    ) -> Result<Device> {
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
        // A transfer-only family and a compute family without graphics (AMD's, or the test
        // layer's AMD shape's) get a queue too, as applications that stream data or run
        // async compute ask for.
        let only = |has: vk::QueueFlags, lacks: vk::QueueFlags| {
            families
                .iter()
                .position(|f| f.queue_flags.contains(has) && !f.queue_flags.intersects(lacks))
                .map(|f| f as u32)
        };
        let transfer_family = only(
            vk::QueueFlags::TRANSFER,
            vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE,
        );
        let compute_family = only(vk::QueueFlags::COMPUTE, vk::QueueFlags::GRAPHICS);
        let priorities = [1.0f32];
        let queue_info: Vec<_> = [Some(family), transfer_family, compute_family]
            .into_iter()
            .flatten()
            .map(|f| {
                vk::DeviceQueueCreateInfo::default()
                    .queue_family_index(f)
                    .queue_priorities(&priorities)
            })
            .collect();
        let ext_ptrs: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
        let wants_multi_draw = extensions.contains(&ash::ext::multi_draw::NAME);
        // SAFETY: a live physical device.
        let api = unsafe { instance.get_physical_device_properties(physical) }.api_version;
        // A Vulkan 1.1 device (such as the test layer's `v1_1` shape) gets 1.1's features
        // only: no timeline semaphores, host query reset, synchronization2 or dynamic
        // rendering, and no 1.2/1.3 structures in the chain.
        let v1_1 = api < vk::API_VERSION_1_2;
        let (draw_indirect_count, multi_draw) = if v1_1 {
            (false, false)
        } else {
            optional_features(inst, physical, wants_multi_draw)
        };
        // Everything the scenarios record: what Vulkan 1.3 requires, plus the optional
        // features the device has.
        let mut features11 = vk::PhysicalDeviceVulkan11Features::default().multiview(true);
        let mut features12 = vk::PhysicalDeviceVulkan12Features::default()
            .draw_indirect_count(draw_indirect_count)
            .host_query_reset(true)
            .timeline_semaphore(true)
            .buffer_device_address(extra.buffer_device_address);
        let mut features13 = vk::PhysicalDeviceVulkan13Features::default()
            .synchronization2(sync2)
            .dynamic_rendering(true)
            .maintenance4(extra.maintenance4);
        // The scenario's own structures follow the core ones (push_next below walks to the
        // end of this chain before linking the rest).
        features13.p_next = extra.next;
        let mut multi_draw_features =
            vk::PhysicalDeviceMultiDrawFeaturesEXT::default().multi_draw(true);
        let features = vk::PhysicalDeviceFeatures::default()
            .multi_draw_indirect(true)
            .pipeline_statistics_query(STATISTICS.load(std::sync::atomic::Ordering::Relaxed));
        let mut multiview = vk::PhysicalDeviceMultiviewFeatures::default().multiview(true);
        let mut features2 = vk::PhysicalDeviceFeatures2::default().features(features);
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_info)
            .enabled_extension_names(&ext_ptrs);
        info = if FEATURES_IN_CHAIN.load(std::sync::atomic::Ordering::Relaxed) {
            info.push_next(&mut features2)
        } else {
            info.enabled_features(&features)
        };
        info = if v1_1 {
            info.push_next(&mut multiview)
        } else {
            info.push_next(&mut features11)
                .push_next(&mut features12)
                .push_next(&mut features13)
        };
        if multi_draw {
            info = info.push_next(&mut multi_draw_features);
        }
        // SAFETY: valid create info for this physical device.
        let device = check(
            unsafe { instance.create_device(physical, &info, None) },
            "vkCreateDevice",
        )?;
        // SAFETY: the queues were requested above.
        let (queue, transfer, compute) = unsafe {
            let queue_of = |f: Option<u32>| f.map(|f| (f, device.get_device_queue(f, 0)));
            (
                device.get_device_queue(family, 0),
                queue_of(transfer_family),
                queue_of(compute_family),
            )
        };
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
            sync2: sync2 && !v1_1,
            transfer,
            compute,
            draw_indirect_count,
            multi_draw,
            fence_timeout_ns: std::sync::atomic::AtomicU64::new(10_000_000_000),
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

    /// A secondary command buffer from the device's pool, begun with `usage` and
    /// `inheritance`, recorded by `record`, ended.
    pub fn secondary(
        &self,
        usage: vk::CommandBufferUsageFlags,
        inheritance: &vk::CommandBufferInheritanceInfo<'_>,
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Result<vk::CommandBuffer> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::SECONDARY)
            .command_buffer_count(1);
        // SAFETY: valid allocate and begin infos; the command buffer is ended below.
        unsafe {
            let cb = check(
                self.device.allocate_command_buffers(&info),
                "vkAllocateCommandBuffers",
            )?[0];
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(usage)
                .inheritance_info(inheritance);
            check(
                self.device.begin_command_buffer(cb, &begin),
                "vkBeginCommandBuffer",
            )?;
            record(cb);
            check(self.device.end_command_buffer(cb), "vkEndCommandBuffer")?;
            Ok(cb)
        }
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

    /// A timeline semaphore starting at `initial` (timeline semaphores are core 1.2).
    pub fn timeline_semaphore(&self, initial: u64) -> Result<vk::Semaphore> {
        let mut type_info = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(initial);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut type_info);
        // SAFETY: valid create info on a live device.
        check(
            unsafe { self.device.create_semaphore(&info, None) },
            "vkCreateSemaphore",
        )
    }

    /// Waits for a fence (10 s at most) and resets it.
    fn timeout(&self) -> u64 {
        self.fence_timeout_ns
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn wait_and_reset(&self, fence: vk::Fence) -> Result<()> {
        // SAFETY: a fence of this device.
        unsafe {
            check(
                self.device.wait_for_fences(&[fence], true, self.timeout()),
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

/// Whether the device has drawIndirectCount, and (asked only when VK_EXT_multi_draw is to
/// be enabled, whose structure is invalid without it) multiDraw.
fn optional_features(
    inst: &Instance,
    physical: vk::PhysicalDevice,
    multi_draw_extension: bool,
) -> (bool, bool) {
    let mut features12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut multi_draw = vk::PhysicalDeviceMultiDrawFeaturesEXT::default();
    let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut features12);
    if multi_draw_extension {
        features = features.push_next(&mut multi_draw);
    }
    // SAFETY: a live physical device of a Vulkan 1.3 instance; the chain holds only
    // structures of core versions and of extensions the device has.
    unsafe {
        inst.instance
            .get_physical_device_features2(physical, &mut features)
    };
    (
        features12.draw_indirect_count == vk::TRUE,
        multi_draw.multi_draw == vk::TRUE,
    )
}
