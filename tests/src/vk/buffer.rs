use ash::vk;

use super::{check, Device, Result};

/// A buffer with host-visible, coherent memory, mapped.
pub struct Buffer {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub size: u64,
    pub mapped: *mut u8,
    /// The buffer's device address (buffers made by [`Buffer::addressed`]), else 0.
    pub address: vk::DeviceAddress,
}

// SAFETY: the mapping is host memory owned by the buffer; Vulkan allows it to be used from
// any thread, and the buffer moves between threads whole.
unsafe impl Send for Buffer {}

impl Buffer {
    pub fn new(dev: &Device, size: u64, usage: vk::BufferUsageFlags) -> Result<Buffer> {
        Self::make(dev, size, usage, false, &[])
    }

    /// A buffer used by the queues of several `families` at once (concurrent sharing).
    pub fn shared(
        dev: &Device,
        size: u64,
        usage: vk::BufferUsageFlags,
        families: &[u32],
    ) -> Result<Buffer> {
        Self::make(dev, size, usage, false, families)
    }

    /// A buffer read by its device address (acceleration-structure inputs and storage,
    /// shader binding tables, generated-commands buffers): `SHADER_DEVICE_ADDRESS` is added
    /// to `usage` and the memory allocated with `DEVICE_ADDRESS` (the device must have
    /// bufferDeviceAddress enabled, see `Extra`).
    pub fn addressed(dev: &Device, size: u64, usage: vk::BufferUsageFlags) -> Result<Buffer> {
        Self::make(
            dev,
            size,
            usage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
            true,
            &[],
        )
    }

    fn make(
        dev: &Device,
        size: u64,
        usage: vk::BufferUsageFlags,
        addressed: bool,
        families: &[u32],
    ) -> Result<Buffer> {
        let d = &dev.device;
        let mut info = vk::BufferCreateInfo::default().size(size).usage(usage);
        if families.len() > 1 {
            info = info
                .sharing_mode(vk::SharingMode::CONCURRENT)
                .queue_family_indices(families);
        }
        // SAFETY: valid create info, allocation for the buffer's requirements, and a map of
        // the whole allocation.
        unsafe {
            let buffer = check(d.create_buffer(&info, None), "vkCreateBuffer")?;
            let reqs = d.get_buffer_memory_requirements(buffer);
            let type_index = dev.memory_type(
                reqs.memory_type_bits,
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
            )?;
            let mut flags = vk::MemoryAllocateFlagsInfo::default()
                .flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
            let mut alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(reqs.size)
                .memory_type_index(type_index);
            if addressed {
                alloc = alloc.push_next(&mut flags);
            }
            let memory = check(d.allocate_memory(&alloc, None), "vkAllocateMemory")?;
            check(
                d.bind_buffer_memory(buffer, memory, 0),
                "vkBindBufferMemory",
            )?;
            let mapped = check(
                d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()),
                "vkMapMemory",
            )? as *mut u8;
            let address = if addressed {
                d.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer))
            } else {
                0
            };
            Ok(Buffer {
                buffer,
                memory,
                size,
                mapped,
                address,
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
