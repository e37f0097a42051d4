//! Measures what the layer costs the application, in one run, five ways: no layer, the
//! layer loaded but disabled (`UTRACE_DISABLE=1`), loaded with no tracing variable (on
//! demand: registered with Perfetto's system backend, no session), tracing to a txt file,
//! and tracing to a Perfetto file.
//! Each way runs in a child process of its own (the layer reads its configuration once per
//! process), on Lavapipe.
//!
//! ```text
//! utrace-bench [--iterations N]
//! ```
//!
//! Figures: recording a command buffer (begin + 100 dispatches + end), two threads each
//! recording one at once (wall time per pair), one `vkQueueSubmit` call, and a
//! submit-and-wait round trip of a reusable command buffer.

use std::process::Command;
use std::time::Instant;

use ash::vk;
use utrace_tests::harness::{write_manifest, TempDir, LAVAPIPE_ICD};
use utrace_tests::vk::{Buffer, Device, FillPipeline, Instance, Result};

const DISPATCHES: u32 = 100;

/// A variable a benchmark child runs with.
type Var<'a> = (&'a str, &'a std::ffi::OsStr);

fn child(mode: &str, iterations: u32) -> Result<String> {
    let layers = if mode == "none" {
        vec![]
    } else {
        vec!["VK_LAYER_utrace".to_string()]
    };
    let inst = Instance::new(&layers, &[])?;
    let dev = Device::new(&inst, &[], false)?;
    let data = Buffer::new(&dev, 4096, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let pipeline = FillPipeline::new(&dev, &data)?;
    let cb = dev.command_buffers(1)?[0];
    let fence = dev.fence()?;
    let record = |usage| -> Result<()> {
        dev.begin(cb, usage)?;
        for i in 0..DISPATCHES {
            pipeline.record(&dev, cb, i, 64);
        }
        dev.end(cb)
    };

    // Recording, warm-up first.
    for _ in 0..iterations / 10 {
        record(vk::CommandBufferUsageFlags::empty())?;
    }
    let t = Instant::now();
    for _ in 0..iterations {
        record(vk::CommandBufferUsageFlags::empty())?;
    }
    let record_ns = t.elapsed().as_nanos() as f64 / f64::from(iterations);

    // Recording on two threads at once, each into its own pool: the layer must not
    // serialise them (no global lock held while recording).
    let threaded_ns = record_on_threads(&dev, &pipeline, iterations)?;

    // Submit and wait, with the call's own cost measured apart.
    let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cb));
    let mut submit_ns = 0f64;
    let t = Instant::now();
    for _ in 0..iterations {
        let s = Instant::now();
        // SAFETY: a recorded, idle command buffer and an unsignalled fence.
        unsafe { dev.device.queue_submit(dev.queue, &[submit], fence) }
            .map_err(|e| format!("vkQueueSubmit: {e}"))?;
        submit_ns += s.elapsed().as_nanos() as f64;
        dev.wait_and_reset(fence)?;
    }
    let round_trip_ns = t.elapsed().as_nanos() as f64 / f64::from(iterations);
    submit_ns /= f64::from(iterations);

    // SAFETY: all work completed.
    unsafe {
        dev.device.device_wait_idle().map_err(|e| e.to_string())?;
        dev.device.destroy_fence(fence, None);
    }
    pipeline.destroy(&dev);
    data.destroy(&dev);
    dev.destroy();
    inst.destroy();
    Ok(format!(
        "{record_ns:.0} {threaded_ns:.0} {submit_ns:.0} {round_trip_ns:.0}"
    ))
}

/// Per pair of command buffers, the wall time two threads take to record `iterations` command buffers of
/// `DISPATCHES` dispatches each, at once, into pools of their own.
fn record_on_threads(dev: &Device, pipeline: &FillPipeline, iterations: u32) -> Result<f64> {
    const THREADS: usize = 2;
    let started = Instant::now();
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(move || -> Result<()> {
                    let info = vk::CommandPoolCreateInfo::default()
                        .queue_family_index(dev.family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
                    // SAFETY: valid create and allocate infos; the pool is this thread's.
                    let (pool, cb) = unsafe {
                        let pool = dev
                            .device
                            .create_command_pool(&info, None)
                            .map_err(|e| e.to_string())?;
                        let alloc = vk::CommandBufferAllocateInfo::default()
                            .command_pool(pool)
                            .level(vk::CommandBufferLevel::PRIMARY)
                            .command_buffer_count(1);
                        (
                            pool,
                            dev.device
                                .allocate_command_buffers(&alloc)
                                .map_err(|e| e.to_string())?[0],
                        )
                    };
                    for _ in 0..iterations {
                        dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
                        for i in 0..DISPATCHES {
                            pipeline.record(dev, cb, i, 64);
                        }
                        dev.end(cb)?;
                    }
                    // SAFETY: the command buffer was never submitted.
                    unsafe { dev.device.destroy_command_pool(pool, None) };
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())))
            .collect()
    });
    for r in results {
        r?;
    }
    Ok(started.elapsed().as_nanos() as f64 / f64::from(iterations))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let iterations: u32 = args
        .iter()
        .position(|a| a == "--iterations")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    if let Some(i) = args.iter().position(|a| a == "--child") {
        match child(&args[i + 1], iterations) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("utrace-bench: {e}");
                std::process::exit(1);
            }
        }
        return;
    }

    let dir = TempDir::new("bench");
    let layers = write_manifest(dir.path());
    let trace = dir.path().join("trace.txt");
    println!("utrace-bench: {iterations} iterations per figure, Lavapipe, {DISPATCHES} dispatches per command buffer");
    println!(
        "{:<22} {:>14} {:>22} {:>18} {:>18}",
        "", "record cb (us)", "2 threads, per pair (us)", "vkQueueSubmit (us)", "submit+wait (us)"
    );
    let perfetto = dir.path().join("trace.pftrace");
    let modes: [(&str, &str, Vec<Var<'_>>); 5] = [
        ("none", "no layer", vec![]),
        (
            "disabled",
            "layer disabled",
            vec![("UTRACE_DISABLE", "1".as_ref())],
        ),
        ("on-demand", "on demand, no session", vec![]),
        (
            "tracing",
            "tracing, txt",
            vec![("GPU_TRACEFILE", trace.as_os_str())],
        ),
        (
            "perfetto",
            "tracing, perfetto",
            vec![("GPU_TRACEFILE", perfetto.as_os_str())],
        ),
    ];
    for (mode, label, vars) in modes {
        let mut cmd = Command::new(&args[0]);
        cmd.args(["--child", mode, "--iterations", &iterations.to_string()])
            .env("VK_DRIVER_FILES", LAVAPIPE_ICD)
            .env("VK_ADD_LAYER_PATH", &layers)
            .env("XDG_RUNTIME_DIR", dir.path())
            .env_remove("GPU_TRACE")
            .env_remove("GPU_TRACEFILE")
            .env_remove("VK_INSTANCE_LAYERS");
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("the benchmark child runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let figures: Vec<f64> = text
            .split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect();
        if !out.status.success() || figures.len() != 4 {
            eprintln!("{label}: failed: {}", String::from_utf8_lossy(&out.stderr));
            std::process::exit(1);
        }
        println!(
            "{label:<22} {:>14.2} {:>22.2} {:>18.2} {:>18.2}",
            figures[0] / 1000.0,
            figures[1] / 1000.0,
            figures[2] / 1000.0,
            figures[3] / 1000.0
        );
    }
    let lines = std::fs::read_to_string(&trace)
        .map(|t| t.lines().count())
        .unwrap_or(0);
    let bytes = std::fs::metadata(&perfetto).map(|m| m.len()).unwrap_or(0);
    println!("(the txt run wrote {lines} lines of trace, the perfetto run {bytes} bytes)");
}
