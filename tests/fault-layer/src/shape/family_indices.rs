//! Queue family indices the application passes, with the AMD shape's extra families
//! replaced by the driver's (see [`super::extra_families`]): command pools, sharing lists
//! of images, buffers and swapchains, and ownership transfers in barriers. A barrier
//! between the two families becomes one within the driver's family, and a concurrent
//! sharing list of both becomes exclusive.

use ash::vk;

use super::extra_families::{driver_family, sharing};

pub unsafe extern "system" fn create_command_pool(
    device: vk::Device,
    info: *const vk::CommandPoolCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::CommandPool,
) -> vk::Result {
    // SAFETY: the caller's valid info, copied.
    let mut own = unsafe { *info };
    own.queue_family_index = driver_family(own.queue_family_index);
    device_down!(
        device,
        c"vkCreateCommandPool",
        vk::PFN_vkCreateCommandPool,
        (device, &own, alloc, out)
    )
    .unwrap_or(vk::Result::ERROR_DEVICE_LOST)
}

/// A create info with a sharing list, which the extra families must not reach.
pub trait Shared {
    /// The sharing mode, count and list, to read and replace.
    fn sharing(&mut self) -> (&mut vk::SharingMode, &mut u32, &mut *const u32);

    /// Replaces the list with the driver's families, kept alive by `keep`.
    ///
    /// # Safety
    /// The list points at `count` indices (or is ignored when the mode is exclusive).
    unsafe fn to_driver_families(&mut self, keep: &mut Vec<u32>) {
        let (mode, count, list) = self.sharing();
        if *mode != vk::SharingMode::CONCURRENT || list.is_null() {
            return;
        }
        // SAFETY: as the caller promises.
        let families = unsafe { std::slice::from_raw_parts(*list, *count as usize) };
        let (fixed_mode, fixed) = sharing(*mode, families);
        *keep = fixed;
        (*mode, *count, *list) = (fixed_mode, keep.len() as u32, keep.as_ptr());
    }
}

macro_rules! shared {
    ($($t:ty => $mode:ident),*) => {$(
        impl Shared for $t {
            fn sharing(&mut self) -> (&mut vk::SharingMode, &mut u32, &mut *const u32) {
                (&mut self.$mode, &mut self.queue_family_index_count, &mut self.p_queue_family_indices)
            }
        }
    )*};
}
shared!(
    vk::BufferCreateInfo<'_> => sharing_mode,
    vk::ImageCreateInfo<'_> => sharing_mode,
    vk::SwapchainCreateInfoKHR<'_> => image_sharing_mode
);

/// A create hook whose info's sharing list is given the driver's families.
macro_rules! created_shared {
    ($hook:ident, $name:literal, $pfn:ty, $info:ty, $out:ty) => {
        pub unsafe extern "system" fn $hook(
            device: vk::Device,
            info: *const $info,
            alloc: *const vk::AllocationCallbacks<'_>,
            out: *mut $out,
        ) -> vk::Result {
            let mut keep = Vec::new();
            // SAFETY: the caller's valid info, copied, and its own list.
            let own = unsafe {
                let mut own = *info;
                own.to_driver_families(&mut keep);
                own
            };
            device_down!(device, $name, $pfn, (device, &own, alloc, out))
                .unwrap_or(vk::Result::ERROR_DEVICE_LOST)
        }
    };
}

created_shared!(
    create_image,
    c"vkCreateImage",
    vk::PFN_vkCreateImage,
    vk::ImageCreateInfo<'_>,
    vk::Image
);
created_shared!(
    create_swapchain,
    c"vkCreateSwapchainKHR",
    vk::PFN_vkCreateSwapchainKHR,
    vk::SwapchainCreateInfoKHR<'_>,
    vk::SwapchainKHR
);

/// Barriers with the extra families replaced in their ownership transfers.
trait Owned: Copy {
    fn families(&mut self) -> (&mut u32, &mut u32);
}
macro_rules! owned {
    ($($t:ty),*) => {$(
        impl Owned for $t {
            fn families(&mut self) -> (&mut u32, &mut u32) {
                (&mut self.src_queue_family_index, &mut self.dst_queue_family_index)
            }
        }
    )*};
}
owned!(
    vk::BufferMemoryBarrier<'_>,
    vk::ImageMemoryBarrier<'_>,
    vk::BufferMemoryBarrier2<'_>,
    vk::ImageMemoryBarrier2<'_>
);

/// `count` barriers at `ptr`, copied with the families fixed.
///
/// # Safety
/// `ptr` points at `count` barriers, or is null.
unsafe fn fixed<T: Owned>(ptr: *const T, count: u32) -> Vec<T> {
    if ptr.is_null() || count == 0 {
        return Vec::new();
    }
    // SAFETY: as the caller promises.
    let mut own = unsafe { std::slice::from_raw_parts(ptr, count as usize) }.to_vec();
    for b in &mut own {
        let (src, dst) = b.families();
        *src = driver_family(*src);
        *dst = driver_family(*dst);
    }
    own
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn cmd_pipeline_barrier(
    cb: vk::CommandBuffer,
    src: vk::PipelineStageFlags,
    dst: vk::PipelineStageFlags,
    dependency: vk::DependencyFlags,
    memory_count: u32,
    memory: *const vk::MemoryBarrier<'_>,
    buffer_count: u32,
    buffers: *const vk::BufferMemoryBarrier<'_>,
    image_count: u32,
    images: *const vk::ImageMemoryBarrier<'_>,
) {
    // SAFETY: the caller's arrays.
    let (buffers, images) = unsafe { (fixed(buffers, buffer_count), fixed(images, image_count)) };
    device_down!(
        cb,
        c"vkCmdPipelineBarrier",
        vk::PFN_vkCmdPipelineBarrier,
        (
            cb,
            src,
            dst,
            dependency,
            memory_count,
            memory,
            buffer_count,
            buffers.as_ptr(),
            image_count,
            images.as_ptr()
        )
    );
}

pub unsafe extern "system" fn cmd_pipeline_barrier2(
    cb: vk::CommandBuffer,
    info: *const vk::DependencyInfo<'_>,
) {
    // SAFETY: the caller's valid dependency info and its arrays, copied.
    let (mut own, buffers, images) = unsafe {
        let own = *info;
        let buffers = fixed(
            own.p_buffer_memory_barriers,
            own.buffer_memory_barrier_count,
        );
        let images = fixed(own.p_image_memory_barriers, own.image_memory_barrier_count);
        (own, buffers, images)
    };
    own.p_buffer_memory_barriers = buffers.as_ptr();
    own.p_image_memory_barriers = images.as_ptr();
    device_down!(
        cb,
        c"vkCmdPipelineBarrier2",
        vk::PFN_vkCmdPipelineBarrier2,
        (cb, &own)
    );
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn cmd_wait_events(
    cb: vk::CommandBuffer,
    event_count: u32,
    events: *const vk::Event,
    src: vk::PipelineStageFlags,
    dst: vk::PipelineStageFlags,
    memory_count: u32,
    memory: *const vk::MemoryBarrier<'_>,
    buffer_count: u32,
    buffers: *const vk::BufferMemoryBarrier<'_>,
    image_count: u32,
    images: *const vk::ImageMemoryBarrier<'_>,
) {
    // SAFETY: the caller's arrays.
    let (buffers, images) = unsafe { (fixed(buffers, buffer_count), fixed(images, image_count)) };
    device_down!(
        cb,
        c"vkCmdWaitEvents",
        vk::PFN_vkCmdWaitEvents,
        (
            cb,
            event_count,
            events,
            src,
            dst,
            memory_count,
            memory,
            buffer_count,
            buffers.as_ptr(),
            image_count,
            images.as_ptr()
        )
    );
}
