//! The two submit commands (`vkQueueSubmit` with `VkSubmitInfo`s, `vkQueueSubmit2` with
//! `VkSubmitInfo2`s) as one interface, so that the hook and the trace core handle a
//! submission with one generic function (monomorphised for each: no dynamic dispatch).

use ash::vk;

use super::wrapped_submit::{queue_submit, queue_submit2, Wrapping};
use crate::ffi::slice;
use crate::loader::dispatch::DeviceDispatch;

/// A batch of one submit command, and what the layer does with that command.
pub trait Submission: Copy {
    /// The command's name, for messages.
    const NAME: &'static str;
    /// The next layer's function.
    type Next: Copy;

    /// Calls `next` with the application's arguments as they are.
    ///
    /// # Safety
    /// Vulkan's rules for the command.
    unsafe fn call(
        next: Self::Next,
        queue: vk::Queue,
        count: u32,
        batches: *const Self,
        fence: vk::Fence,
    ) -> vk::Result;

    /// The command buffers the batch submits, in order.
    ///
    /// # Safety
    /// The batch's list is valid.
    unsafe fn command_buffers(&self) -> impl Iterator<Item = vk::CommandBuffer> + '_;

    /// Whether the batch signals a semaphore.
    fn signals(&self) -> bool;

    /// Whether the layer may insert command buffers into the batch: not into a protected
    /// batch (its command buffers are not protected) nor where a device group gives each
    /// command buffer a device mask.
    fn splittable(&self) -> bool;

    /// The application's batches submitted with the layer's (see [`Wrapping`]).
    ///
    /// # Safety
    /// Vulkan's rules for the command; `next` is the next layer's function.
    unsafe fn wrapped(
        d: &DeviceDispatch,
        next: Self::Next,
        queue: vk::Queue,
        batches: &[Self],
        fence: vk::Fence,
        wrap: &Wrapping<'_>,
    ) -> vk::Result;
}

impl Submission for vk::SubmitInfo<'_> {
    const NAME: &'static str = "vkQueueSubmit";
    type Next = vk::PFN_vkQueueSubmit;

    unsafe fn call(
        next: vk::PFN_vkQueueSubmit,
        queue: vk::Queue,
        count: u32,
        batches: *const Self,
        fence: vk::Fence,
    ) -> vk::Result {
        // SAFETY: the caller's promise.
        unsafe { next(queue, count, batches, fence) }
    }

    unsafe fn command_buffers(&self) -> impl Iterator<Item = vk::CommandBuffer> + '_ {
        // SAFETY: the batch holds `command_buffer_count` command buffers.
        unsafe { slice(self.p_command_buffers, self.command_buffer_count) }
            .iter()
            .copied()
    }

    fn signals(&self) -> bool {
        self.signal_semaphore_count > 0
    }

    fn splittable(&self) -> bool {
        let mut next = self.p_next.cast::<vk::BaseInStructure>();
        while !next.is_null() {
            // SAFETY: a valid chain of the application's; each element starts with
            // sType/pNext, and the protected info is read as its own type.
            unsafe {
                match (*next).s_type {
                    vk::StructureType::DEVICE_GROUP_SUBMIT_INFO => return false,
                    vk::StructureType::PROTECTED_SUBMIT_INFO
                        if (*next.cast::<vk::ProtectedSubmitInfo>()).protected_submit
                            == vk::TRUE =>
                    {
                        return false
                    }
                    _ => {}
                }
                next = (*next).p_next;
            }
        }
        true
    }

    unsafe fn wrapped(
        d: &DeviceDispatch,
        next: vk::PFN_vkQueueSubmit,
        queue: vk::Queue,
        batches: &[Self],
        fence: vk::Fence,
        wrap: &Wrapping<'_>,
    ) -> vk::Result {
        // SAFETY: the caller's promise.
        unsafe { queue_submit(d, next, queue, batches, fence, wrap) }
    }
}

impl Submission for vk::SubmitInfo2<'_> {
    const NAME: &'static str = "vkQueueSubmit2";
    type Next = vk::PFN_vkQueueSubmit2;

    unsafe fn call(
        next: vk::PFN_vkQueueSubmit2,
        queue: vk::Queue,
        count: u32,
        batches: *const Self,
        fence: vk::Fence,
    ) -> vk::Result {
        // SAFETY: the caller's promise.
        unsafe { next(queue, count, batches, fence) }
    }

    unsafe fn command_buffers(&self) -> impl Iterator<Item = vk::CommandBuffer> + '_ {
        // SAFETY: the batch holds `command_buffer_info_count` infos.
        unsafe { slice(self.p_command_buffer_infos, self.command_buffer_info_count) }
            .iter()
            .map(|info| info.command_buffer)
    }

    fn signals(&self) -> bool {
        self.signal_semaphore_info_count > 0
    }

    fn splittable(&self) -> bool {
        !self.flags.contains(vk::SubmitFlags::PROTECTED)
    }

    unsafe fn wrapped(
        d: &DeviceDispatch,
        next: vk::PFN_vkQueueSubmit2,
        queue: vk::Queue,
        batches: &[Self],
        fence: vk::Fence,
        wrap: &Wrapping<'_>,
    ) -> vk::Result {
        // SAFETY: the caller's promise.
        unsafe { queue_submit2(d, next, queue, batches, fence, wrap) }
    }
}
