//! Host-visible buffers that a batch's timestamps are copied into on the GPU
//! (`vkCmdCopyQueryPoolResults`), so that the application may reuse its command buffers, and
//! the layer its queries, as soon as the copy has run.

use ash::vk;

use super::check;
use crate::loader::dispatch::DeviceDispatch;

pub struct Readback {
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    mapped: *const u64,
    /// Room, in 64-bit timestamps.
    pub capacity: u32,
    coherent: bool,
}

// SAFETY: the mapping is only read by the thread that owns the `Readback` at the time (the
// traceq thread after the batch completed); Vulkan memory may be accessed from any thread.
unsafe impl Send for Readback {}

impl Readback {
    pub fn create(
        d: &DeviceDispatch,
        memory_props: &vk::PhysicalDeviceMemoryProperties,
        capacity: u32,
    ) -> Result<Readback, vk::Result> {
        let size = u64::from(capacity) * 8;
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(vk::BufferUsageFlags::TRANSFER_DST)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        let fp = &d.fp_v1_0;
        let mut buffer = vk::Buffer::null();
        // SAFETY: valid create info on a live device.
        check(unsafe { (fp.create_buffer)(d.handle, &info, std::ptr::null(), &mut buffer) })?;
        let mut reqs = vk::MemoryRequirements::default();
        // SAFETY: `buffer` was just created on this device.
        unsafe { (fp.get_buffer_memory_requirements)(d.handle, buffer, &mut reqs) };
        let Some((type_index, coherent)) = pick_memory_type(memory_props, reqs.memory_type_bits)
        else {
            // SAFETY: the buffer is unused.
            unsafe { (fp.destroy_buffer)(d.handle, buffer, std::ptr::null()) };
            return Err(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
        };
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(reqs.size)
            .memory_type_index(type_index);
        let mut memory = vk::DeviceMemory::null();
        let mut mapped: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: allocation, binding and mapping of fresh objects; on failure everything
        // created so far is released.
        let result = unsafe {
            check((fp.allocate_memory)(
                d.handle,
                &alloc,
                std::ptr::null(),
                &mut memory,
            ))
            .and_then(|()| check((fp.bind_buffer_memory)(d.handle, buffer, memory, 0)))
            .and_then(|()| {
                check((fp.map_memory)(
                    d.handle,
                    memory,
                    0,
                    vk::WHOLE_SIZE,
                    vk::MemoryMapFlags::empty(),
                    &mut mapped,
                ))
            })
        };
        if let Err(e) = result {
            // SAFETY: nothing pending uses these new objects.
            unsafe {
                (fp.destroy_buffer)(d.handle, buffer, std::ptr::null());
                if memory != vk::DeviceMemory::null() {
                    (fp.free_memory)(d.handle, memory, std::ptr::null());
                }
            }
            return Err(e);
        }
        Ok(Readback {
            buffer,
            memory,
            mapped: mapped as *const u64,
            capacity,
            coherent,
        })
    }

    /// The first `count` timestamps. Call only after the batch that wrote them completed.
    pub fn read(&self, d: &DeviceDispatch, count: u32) -> &[u64] {
        let count = count.min(self.capacity);
        if !self.coherent {
            let range = vk::MappedMemoryRange::default()
                .memory(self.memory)
                .offset(0)
                .size(vk::WHOLE_SIZE);
            // SAFETY: the memory is mapped; invalidation makes the GPU's writes visible.
            let _ = unsafe { (d.fp_v1_0.invalidate_mapped_memory_ranges)(d.handle, 1, &range) };
        }
        // SAFETY: the mapping holds `capacity` u64s and stays mapped while `self` lives.
        unsafe { std::slice::from_raw_parts(self.mapped, count as usize) }
    }

    /// `count` timestamps from the `first` on. Call only after the work that wrote them
    /// completed.
    pub fn read_at(&self, d: &DeviceDispatch, first: u32, count: u32) -> &[u64] {
        let all = self.read(d, self.capacity);
        let first = (first as usize).min(all.len());
        &all[first..(first + count as usize).min(all.len())]
    }

    pub fn destroy(self, d: &DeviceDispatch) {
        // SAFETY: called when no pending work uses the buffer; freeing unmaps the memory.
        unsafe {
            (d.fp_v1_0.destroy_buffer)(d.handle, self.buffer, std::ptr::null());
            (d.fp_v1_0.free_memory)(d.handle, self.memory, std::ptr::null());
        }
    }
}

/// Host-visible memory, preferably coherent and cached (the CPU reads it).
fn pick_memory_type(
    props: &vk::PhysicalDeviceMemoryProperties,
    allowed: u32,
) -> Option<(u32, bool)> {
    let types = &props.memory_types[..props.memory_type_count as usize];
    let want = |flags: vk::MemoryPropertyFlags| {
        types.iter().enumerate().find_map(|(i, t)| {
            (allowed & (1 << i) != 0 && t.property_flags.contains(flags)).then_some(i as u32)
        })
    };
    let visible = vk::MemoryPropertyFlags::HOST_VISIBLE;
    let coherent = vk::MemoryPropertyFlags::HOST_COHERENT;
    let cached = vk::MemoryPropertyFlags::HOST_CACHED;
    want(visible | coherent | cached)
        .or_else(|| want(visible | coherent))
        .map(|i| (i, true))
        .or_else(|| want(visible).map(|i| (i, false)))
}
