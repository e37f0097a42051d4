//! `VK_LAYER_UTRACE_fault`: a test layer that sits beneath utrace and makes chosen calls
//! fail, so that the tests can watch utrace meet device loss, allocation failures and a
//! semaphore that never signals on a driver that does none of that by itself.
//!
//! `UTRACE_FAULTS` lists the faults, comma-separated, each `COMMAND=RESULT@N`: the Nth call
//! of COMMAND and every later one return RESULT instead of reaching the driver (N counts
//! from 1; `@N` may be left out for 1). RESULT is `device_lost`, `out_of_device_memory`,
//! `out_of_host_memory` or `timeout`. `vkWaitSemaphores=timeout` also makes
//! `vkGetSemaphoreCounterValue` report 0: a semaphore that never signals.
//! `UTRACE_FAULT_SHOW_SUBMITS=1` makes each submit call say on stderr what it holds.
//!
//! `UTRACE_SHAPE` presents the device in the shape of other hardware (timestamp period,
//! valid bits, missing features), turning every timestamp into that hardware's ticks: see
//! [`shape`]. `UTRACE_PERF_QUERY=1` offers VK_KHR_performance_query's counters: see
//! [`perf_query`]. `UTRACE_INHERITED_QUERIES=1` offers `inheritedQueries` alone (see
//! `perf_inherited`).
//!
//! Intercepted: vkQueueSubmit, vkQueueSubmit2(KHR), vkWaitSemaphores(KHR),
//! vkGetSemaphoreCounterValue(KHR), vkWaitForFences, vkGetQueryPoolResults,
//! vkCreateQueryPool, vkAllocateMemory, vkCreateBuffer, vkCreateEvent, vkGetEventStatus,
//! vkBeginCommandBuffer.
#![allow(non_snake_case)]
#![warn(unsafe_op_in_unsafe_fn)]

/// A hook as `vkGet*ProcAddr` hands it out: `$f`, a function of the command's own
/// signature, as the loader's generic function pointer.
macro_rules! hook {
    ($f:expr) => {
        // SAFETY: each hook has the signature of the command it is returned for.
        Some(unsafe {
            std::mem::transmute::<*const (), unsafe extern "system" fn()>($f as *const ())
        })
    };
}

mod faults;
mod hooks;
mod inherited_checks;
mod loader;
#[macro_use]
mod shape;
mod perf_commands;
mod perf_inherited;
mod perf_pools;
mod perf_query;
mod perf_results;

pub use loader::{
    vkGetDeviceProcAddr, vkGetInstanceProcAddr, vkNegotiateLoaderLayerInterfaceVersion,
};
