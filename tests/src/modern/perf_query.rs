//! The `perf_query` scenario: an application that profiles itself with
//! VK_KHR_performance_query (as engines' own profilers do), on a driver that offers it (the
//! test layer's emulation, `UTRACE_PERF_QUERY=1`, beneath). It takes the profiling lock,
//! makes a pool of three counters ("Draws", "Vertices", "Workgroups", the last of
//! command-buffer scope), and records one command buffer whose first command begins the
//! query and whose last ends it, around a render pass of two draws of 3 vertices and 2
//! instances and a dispatch of 4 groups; the query must read 2, 12 and 4.

use ash::vk;

use crate::gpu_work::graphics::full_barrier;
use crate::gpu_work::scene_target::SceneTarget;
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, Extra, FillPipeline, Instance, Result};

const COUNTERS: [&str; 3] = ["Draws", "Vertices", "Workgroups"];
const WANT: [u64; 3] = [2, 12, 4];

/// A device with VK_KHR_performance_query and `performanceCounterQueryPools`.
pub fn device(inst: &Instance) -> Result<Device> {
    let name = ash::khr::performance_query::NAME;
    let physical = inst.physical_device()?;
    super::require_extensions(inst, physical, &[name])?;
    let mut perf = vk::PhysicalDevicePerformanceQueryFeaturesKHR::default()
        .performance_counter_query_pools(true);
    let extra = Extra {
        next: &mut perf as *mut _ as *mut std::ffi::c_void,
        ..Extra::default()
    };
    Device::new_with(inst, &[name], true, extra)
}

/// The indices of [`COUNTERS`] among the family's.
fn counter_indices(inst: &Instance, dev: &Device) -> Result<Vec<u32>> {
    let perf = ash::khr::performance_query::Instance::new(&inst.entry, &inst.instance);
    // SAFETY: a physical device of this instance with the extension; the two-call idiom.
    let names = unsafe {
        let n = perf
            .enumerate_physical_device_queue_family_performance_query_counters_len(
                dev.physical,
                dev.family,
            )
            .map_err(|e| e.to_string())?;
        let mut counters = vec![vk::PerformanceCounterKHR::default(); n];
        let mut descriptions = vec![vk::PerformanceCounterDescriptionKHR::default(); n];
        perf.enumerate_physical_device_queue_family_performance_query_counters(
            dev.physical,
            dev.family,
            &mut counters,
            &mut descriptions,
        )
        .map_err(|e| e.to_string())?;
        descriptions
            .iter()
            .map(|d| {
                d.name_as_c_str()
                    .map_or_else(|_| String::new(), |n| n.to_string_lossy().into_owned())
            })
            .collect::<Vec<_>>()
    };
    COUNTERS
        .iter()
        .map(|want| {
            names
                .iter()
                .position(|n| n == want)
                .map(|i| i as u32)
                .ok_or_else(|| format!("the driver has no counter {want:?}"))
        })
        .collect()
}

pub fn run(inst: &Instance, dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let indices = counter_indices(inst, dev)?;
    let perf = ash::khr::performance_query::Device::new(&inst.instance, d);
    let lock = vk::AcquireProfilingLockInfoKHR::default().timeout(u64::MAX);
    // SAFETY: a live device with the extension enabled.
    let locked = unsafe { perf.acquire_profiling_lock(&lock) };
    check(locked, "vkAcquireProfilingLockKHR")?;
    let mut counters = vk::QueryPoolPerformanceCreateInfoKHR::default()
        .queue_family_index(dev.family)
        .counter_indices(&indices);
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::PERFORMANCE_QUERY_KHR)
        .query_count(1)
        .push_next(&mut counters);
    // SAFETY: a valid create info; performanceCounterQueryPools is on.
    let pool = check(
        unsafe { d.create_query_pool(&info, None) },
        "vkCreateQueryPool",
    )?;
    // SAFETY: a new pool; host query reset is on (Device::new).
    unsafe { d.reset_query_pool(pool, 0, 1) };
    let result = record_and_read(dev, sub, pool);
    // SAFETY: the submission was waited for; the lock was taken above.
    unsafe {
        d.destroy_query_pool(pool, None);
        perf.release_profiling_lock();
    }
    let values = result?;
    if values != WANT {
        eprintln!("utrace-workload: perf_query read {values:?}, not {WANT:?}");
    }
    Ok(values == WANT)
}

/// Records the query around the work, submits it, waits, and reads the three values.
fn record_and_read(dev: &Device, sub: &mut Submitter, pool: vk::QueryPool) -> Result<[u64; 3]> {
    let d = &dev.device;
    let target = SceneTarget::new(dev, false)?;
    let data = Buffer::new(dev, 4096 * 4, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let fill = FillPipeline::new(dev, &data)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    let begin = target.begin_info();
    // SAFETY: `cb` is recording; the query's first command and its last bracket the work.
    unsafe {
        d.cmd_begin_query(cb, pool, 0, vk::QueryControlFlags::empty());
        d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
        target.pipeline.bind(dev, cb);
        d.cmd_draw(cb, 3, 2, 0, 0);
        d.cmd_draw(cb, 3, 2, 0, 0);
        d.cmd_end_render_pass(cb);
    }
    full_barrier(dev, cb);
    fill.record_bindings(dev, cb, &fill, 0, 256);
    // SAFETY: as above, the fill pipeline bound.
    unsafe {
        d.cmd_dispatch(cb, 4, 1, 1);
        d.cmd_end_query(cb, pool, 0);
    }
    dev.end(cb)?;
    let fence = dev.fence()?;
    let mut pass = vk::PerformanceQuerySubmitInfoKHR::default().counter_pass_index(0);
    let cbs = [cb];
    let submit = vk::SubmitInfo::default()
        .command_buffers(&cbs)
        .push_next(&mut pass);
    let before = monotonic_ns();
    // SAFETY: a recorded command buffer of this device; an unsignalled fence.
    let submitted = unsafe { d.queue_submit(dev.queue, &[submit], fence) };
    check(submitted, "vkQueueSubmit")?;
    dev.wait_and_reset(fence)?;
    sub.note("perf-query", &cbs, before, monotonic_ns());
    let mut values = [[0u64; 3]];
    // SAFETY: the run completed; one query of three 8-byte results.
    let read =
        unsafe { d.get_query_pool_results(pool, 0, &mut values, vk::QueryResultFlags::empty()) };
    // SAFETY: no pending work uses these objects.
    unsafe {
        d.destroy_fence(fence, None);
        d.free_command_buffers(dev.pool, &cbs);
    }
    fill.destroy(dev);
    data.destroy(dev);
    target.destroy(dev);
    check(read, "vkGetQueryPoolResults")?;
    Ok(values[0])
}
