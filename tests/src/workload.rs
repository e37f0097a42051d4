//! The workload's scenarios: real Vulkan work (a compute dispatch, buffer fills, copies,
//! updates, swapchain clears) submitted in the patterns the layer must time right.

use ash::vk;

use crate::report::{DeviceReport, Report};
use crate::submitter::Submitter;
use crate::vk::{check, verify_fill, Buffer, Device, FillPipeline, Instance, Result};
use crate::window::{Swapchain, Window};

mod demo;
use demo::demo;

/// Made (empty) once the first frame of `demo` or `frames` completed (start-up done, the
/// driver's pipelines compiled: seconds under valgrind): `--ready-file`, a test's way to
/// act at a point of the run rather than at a time.
pub static READY_FILE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// The first frame completed: [`READY_FILE`] is made.
fn frames_begin() {
    if let Some(path) = READY_FILE.get() {
        if let Err(e) = std::fs::write(path, b"") {
            eprintln!("utrace-workload: cannot make {}: {e}", path.display());
        }
    }
}

/// Words the compute shader writes.
const WORDS: u32 = 4096;
/// The buffer `vkCmdFillBuffer` fills in `basic`: large enough to take measurable GPU time.
const BIG_FILL: u64 = 64 << 20;

pub struct Options {
    pub scenario: String,
    pub layers: Vec<String>,
    pub frames: u32,
    /// Leave without destroying the devices and instances (exit right after the work).
    pub exit_without_destroy: bool,
    /// The pass the `passes` scenario makes heavier.
    pub heavy: Option<crate::frame_passes::Heavy>,
    /// The `frames` scenario ends at the first frame after this file exists (or after
    /// `frames`): a test's way to let a capture begin before the frames run out.
    pub frames_until: Option<std::path::PathBuf>,
    /// Draws in `many-draws`' command buffer (`--draws`).
    pub draws: u32,
}

/// Commands whose `vkGetDeviceProcAddr` answer the tests compare with and without the
/// layer: core ones, ones of extensions the workload never enables, and a made-up one.
const PROBED: &[&std::ffi::CStr] = &[
    c"vkQueueSubmit",
    c"vkQueueSubmit2",
    c"vkBeginCommandBuffer",
    c"vkCmdDraw",
    c"vkQueuePresentKHR",
    c"vkCmdDrawMultiEXT",
    c"vkCmdBeginDebugUtilsLabelEXT",
    c"vkNotACommandAtAll",
];

fn probe_proc_addrs(inst: &Instance, dev: &Device) -> std::collections::BTreeMap<String, bool> {
    PROBED
        .iter()
        .map(|name| {
            // SAFETY: a live device and a NUL-terminated name.
            let f = unsafe {
                (inst.instance.fp_v1_0().get_device_proc_addr)(dev.device.handle(), name.as_ptr())
            };
            (name.to_string_lossy().into_owned(), f.is_some())
        })
        .collect()
}

/// Clears the compute target on the host, so each submission must write it again.
fn clear(buffer: &Buffer) {
    // SAFETY: the mapping covers `size` bytes and no GPU work is pending on it.
    unsafe { std::ptr::write_bytes(buffer.mapped, 0, buffer.size as usize) };
}

/// One one-time-submit command buffer, then one reusable command buffer submitted three
/// times: a dispatch and a 64 MiB fill in each.
fn basic(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let big = Buffer::new(dev, BIG_FILL, vk::BufferUsageFlags::TRANSFER_DST)?;
    let pipeline = FillPipeline::new(dev, &data)?;
    let cbs = dev.command_buffers(2)?;
    let record = |cb, usage, base| -> Result<()> {
        dev.begin(cb, usage)?;
        pipeline.record(dev, cb, base, WORDS);
        // SAFETY: `cb` is recording; the buffer was made with TRANSFER_DST.
        unsafe {
            dev.device
                .cmd_fill_buffer(cb, big.buffer, 0, vk::WHOLE_SIZE, 0x5a5a_5a5a)
        };
        dev.end(cb)
    };
    let mut ok = true;
    record(cbs[0], vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT, 1)?;
    clear(&data);
    sub.submit("one-time", &cbs[..1], None)?;
    ok &= report_check(verify_fill(&data, 1, WORDS));
    record(cbs[1], vk::CommandBufferUsageFlags::empty(), 2)?;
    for k in 1..=3 {
        clear(&data);
        sub.submit(&format!("reusable-{k}"), &cbs[1..], None)?;
        ok &= report_check(verify_fill(&data, 2, WORDS));
    }
    // SAFETY: all work completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &cbs) };
    pipeline.destroy(dev);
    data.destroy(dev);
    big.destroy(dev);
    Ok(ok)
}

fn report_check(r: Result<()>) -> bool {
    match r {
        Ok(()) => true,
        Err(e) => {
            eprintln!("utrace-workload: {e}");
            false
        }
    }
}

/// `frames` frames presented through a swapchain (fewer if `until` comes to exist); each
/// frame a fresh one-time command buffer with a dispatch and the clear of the acquired
/// image, submitted with a reusable command buffer recorded at start-up.
fn frames(
    dev: &Device,
    swapchain: &Swapchain,
    sub: &mut Submitter,
    frames: u32,
    until: Option<&std::path::Path>,
) -> Result<bool> {
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let pipeline = FillPipeline::new(dev, &data)?;
    // Recorded once at start-up and submitted with every frame (a capture that starts later
    // sees it only with GPU_TRACE_INSTRUMENT=1).
    let startup_target = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let startup = dev.command_buffers(1)?[0];
    dev.begin(startup, vk::CommandBufferUsageFlags::empty())?;
    // SAFETY: `startup` is recording; the buffer has TRANSFER_DST.
    unsafe {
        dev.device
            .cmd_fill_buffer(startup, startup_target.buffer, 0, vk::WHOLE_SIZE, 3)
    };
    dev.end(startup)?;
    let mut ok = true;
    for f in 0..frames {
        if until.is_some_and(|u| u.exists()) {
            break;
        }
        let index = swapchain.acquire()?;
        let cb = dev.command_buffers(1)?[0];
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        pipeline.record(dev, cb, f, WORDS);
        swapchain.record_clear(dev, cb, index, f as f32 / frames as f32);
        dev.end(cb)?;
        clear(&data);
        let sync = Some((
            swapchain.acquired,
            vk::PipelineStageFlags::TRANSFER,
            swapchain.rendered[index as usize],
        ));
        sub.submit(&format!("frame-{f}"), &[cb, startup], sync)?;
        ok &= report_check(verify_fill(&data, f, WORDS));
        // SAFETY: the submission completed (its fence was waited for).
        unsafe { dev.device.free_command_buffers(dev.pool, &[cb]) };
        swapchain.present(dev, index)?;
        sub.frame += 1;
        if f == 0 {
            frames_begin();
        }
    }
    // SAFETY: every submission completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &[startup]) };
    startup_target.destroy(dev);
    pipeline.destroy(dev);
    data.destroy(dev);
    Ok(ok)
}

/// Every scenario's name, for the usage text.
pub fn scenarios() -> String {
    let mut names = vec![
        "basic",
        "two-devices",
        "two-instances",
        "instance-after-instance",
        "frames",
        "demo",
    ];
    names.extend_from_slice(crate::gpu_work::SCENARIOS);
    names.extend_from_slice(crate::gpu_work::ALONE);
    names.push("all-gpu-work");
    names.extend_from_slice(crate::patterns::SCENARIOS);
    names.push(crate::validation_control::SCENARIO);
    names.push(crate::frame_passes::SCENARIO);
    names.extend_from_slice(crate::modern::SCENARIOS);
    names.join(", ")
}

pub fn run(opts: &Options) -> Result<Report> {
    if crate::modern::is_scenario(&opts.scenario) {
        return crate::modern::run_workload(opts);
    }
    let wants_window = match opts.scenario.as_str() {
        "frames" => true,
        "demo" => std::env::var_os("DISPLAY").is_some(),
        "basic" | "two-devices" | "two-instances" | "instance-after-instance" => false,
        name if crate::gpu_work::is_scenario(name) => false,
        name if crate::patterns::is_scenario(name) => false,
        crate::validation_control::SCENARIO => false,
        crate::frame_passes::SCENARIO => false,
        other => return Err(format!("unknown scenario {other:?} ({})", scenarios())),
    };
    let window = if wants_window {
        Some(Window::open()?)
    } else {
        None
    };
    let instance_exts = match &window {
        Some(w) => w.required_extensions()?,
        None => Vec::new(),
    };
    if opts.scenario == "two-instances" {
        return two_instances(opts);
    }
    if opts.scenario == "instance-after-instance" {
        return instance_after_instance(opts);
    }
    let gpu_work = crate::gpu_work::is_scenario(&opts.scenario);
    // Labels need VK_EXT_debug_utils: the GPU-work scenarios and the demo use them.
    let labels =
        gpu_work || opts.scenario == "demo" || opts.scenario == crate::frame_passes::SCENARIO;
    let mut instance_exts = instance_exts;
    if labels {
        instance_exts.extend_from_slice(crate::gpu_work::INSTANCE_EXTENSIONS);
    }
    let inst = Instance::new(&opts.layers, &instance_exts)?;
    let mut device_exts: Vec<&std::ffi::CStr> = if window.is_some() {
        vec![ash::khr::swapchain::NAME]
    } else {
        Vec::new()
    };
    if gpu_work {
        device_exts.extend(inst.supported_device_extensions(crate::gpu_work::DEVICE_EXTENSIONS)?);
    }
    let device_count = if opts.scenario == "two-devices" { 2 } else { 1 };
    let devices = (0..device_count)
        .map(|_| Device::new(&inst, &device_exts, true))
        .collect::<Result<Vec<_>>>()?;

    let mut report = Report {
        proc_addrs: probe_proc_addrs(&inst, &devices[0]),
        // SAFETY: gettid has no preconditions.
        main_thread: unsafe { libc::gettid() } as u32,
        ..Report::default()
    };
    for (index, dev) in devices.iter().enumerate() {
        let mut sub = Submitter::new(dev)?;
        let mut features = Vec::new();
        let results_ok = match (opts.scenario.as_str(), &window) {
            ("frames", Some(w)) => {
                let sc = Swapchain::new(&inst, dev, w)?;
                let ok = frames(
                    dev,
                    &sc,
                    &mut sub,
                    opts.frames,
                    opts.frames_until.as_deref(),
                );
                // SAFETY: a live device.
                check(unsafe { dev.device.device_wait_idle() }, "vkDeviceWaitIdle")?;
                sc.destroy(dev);
                ok?
            }
            ("demo", Some(w)) => {
                let sc = Swapchain::new(&inst, dev, w)?;
                let ok = demo(&inst, dev, Some(&sc), &mut sub, opts.frames);
                // SAFETY: a live device.
                check(unsafe { dev.device.device_wait_idle() }, "vkDeviceWaitIdle")?;
                sc.destroy(dev);
                ok?
            }
            ("demo", None) => demo(&inst, dev, None, &mut sub, opts.frames)?,
            (name, _) if gpu_work => {
                crate::gpu_work::run(name, &inst, dev, &mut sub, &mut features)?
            }
            (name, _) if crate::patterns::is_scenario(name) => {
                crate::patterns::run(name, dev, &mut sub, (opts.frames, opts.draws))?
            }
            (crate::validation_control::SCENARIO, _) => {
                crate::validation_control::run(dev, &mut sub)?
            }
            (crate::frame_passes::SCENARIO, _) => {
                crate::frame_passes::run(&inst, dev, &mut sub, opts.frames, opts.heavy.as_ref())?
            }
            _ => basic(dev, &mut sub)?,
        };
        report.presents += sub.frame;
        let (unlogged_submissions, rss_kib) = (sub.unlogged, std::mem::take(&mut sub.rss_kib));
        let idle_waits_ns = std::mem::take(&mut sub.idle_waits_ns);
        report.devices.push(DeviceReport {
            index: index as u32,
            results_ok,
            submissions: sub.destroy(),
            unlogged_submissions,
            rss_kib,
            idle_waits_ns,
            features,
            destroy_ns: 0,
        });
    }
    report.threads = crate::report::thread_names();
    // Read after the destruction too: validation reports objects left alive (the layer's
    // own, created through it) at vkDestroyDevice and vkDestroyInstance.
    let messages = std::sync::Arc::clone(&inst.messages);
    if opts.exit_without_destroy {
        report.validation_messages = messages.lock().map(|m| m.clone()).unwrap_or_default();
        // The caller writes the report and exits; the layer must still leave its trace.
        std::mem::forget(devices);
        std::mem::forget(inst);
        std::mem::forget(window);
        return Ok(report);
    }
    for (dev, device_report) in devices.into_iter().zip(&mut report.devices) {
        let started = crate::vk::monotonic_ns();
        dev.destroy();
        device_report.destroy_ns = crate::vk::monotonic_ns() - started;
    }
    inst.destroy();
    drop(window);
    report.validation_messages = messages.lock().map(|m| m.clone()).unwrap_or_default();
    Ok(report)
}

/// An instance with a device doing `basic`, destroyed, then a second one doing the same (as
/// Zink does: a probing instance first). The loader unloads the layer when the first
/// instance goes; the second device must not reuse the first's number or truncate its trace.
fn instance_after_instance(opts: &Options) -> Result<Report> {
    let mut report = Report::default();
    for index in 0..2 {
        let inst = Instance::new(&opts.layers, &[])?;
        let dev = Device::new(&inst, &[], true)?;
        let mut sub = Submitter::new(&dev)?;
        let results_ok = basic(&dev, &mut sub)?;
        report.devices.push(DeviceReport {
            index,
            results_ok,
            submissions: sub.destroy(),
            ..DeviceReport::default()
        });
        dev.destroy();
        report.validation_messages.extend(inst.destroy_reporting());
    }
    Ok(report)
}

/// Two instances in one process, each with one device doing `basic`: the layer keeps their
/// state apart.
fn two_instances(opts: &Options) -> Result<Report> {
    let instances = [
        Instance::new(&opts.layers, &[])?,
        Instance::new(&opts.layers, &[])?,
    ];
    let mut report = Report::default();
    let mut devices = Vec::new();
    for inst in &instances {
        devices.push(Device::new(inst, &[], true)?);
    }
    for (index, dev) in devices.iter().enumerate() {
        let mut sub = Submitter::new(dev)?;
        let results_ok = basic(dev, &mut sub)?;
        let (unlogged_submissions, rss_kib) = (sub.unlogged, std::mem::take(&mut sub.rss_kib));
        let idle_waits_ns = std::mem::take(&mut sub.idle_waits_ns);
        report.devices.push(DeviceReport {
            index: index as u32,
            results_ok,
            submissions: sub.destroy(),
            unlogged_submissions,
            rss_kib,
            idle_waits_ns,
            features: Vec::new(),
            destroy_ns: 0,
        });
    }
    report.threads = crate::report::thread_names();
    for dev in devices {
        dev.destroy();
    }
    for inst in instances {
        report.validation_messages.extend(inst.destroy_reporting());
    }
    Ok(report)
}
