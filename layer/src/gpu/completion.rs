//! Knowing when a batch has completed: a value of the queue's timeline semaphore, or (where
//! the device has no timeline semaphores) a fence of the layer's own. Waits are bounded so
//! that a lost device or a shutdown never hangs the traceq thread.

use ash::vk;

use crate::loader::dispatch::DeviceDispatch;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionMode {
    Timeline,
    Fence,
}

#[derive(Clone, Copy, Debug)]
pub enum Completion {
    Timeline {
        semaphore: vk::Semaphore,
        value: u64,
    },
    Fence(vk::Fence),
}

#[derive(Debug, PartialEq, Eq)]
pub enum WaitOutcome {
    Done,
    TimedOut,
    Failed(vk::Result),
}

pub fn wait(d: &DeviceDispatch, completion: &Completion, timeout_ns: u64) -> WaitOutcome {
    let result = match *completion {
        Completion::Timeline { semaphore, value } => {
            let Some(wait_semaphores) = d.wait_semaphores else {
                return WaitOutcome::Failed(vk::Result::ERROR_FEATURE_NOT_PRESENT);
            };
            let info = vk::SemaphoreWaitInfo::default()
                .semaphores(std::slice::from_ref(&semaphore))
                .values(std::slice::from_ref(&value));
            // SAFETY: the semaphore lives until the device's tracer is torn down, after
            // this thread has stopped.
            unsafe { wait_semaphores(d.handle, &info, timeout_ns) }
        }
        Completion::Fence(fence) => {
            // SAFETY: the fence belongs to a batch this thread owns.
            unsafe { (d.fp_v1_0.wait_for_fences)(d.handle, 1, &fence, vk::TRUE, timeout_ns) }
        }
    };
    match result {
        vk::Result::SUCCESS => WaitOutcome::Done,
        vk::Result::TIMEOUT => WaitOutcome::TimedOut,
        error => WaitOutcome::Failed(error),
    }
}
