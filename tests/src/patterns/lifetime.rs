//! Command buffers and pools whose life ends right after the fence wait, and recording on
//! eight threads.

use std::sync::Mutex;

use ash::vk;

use super::{allocate, first_word, pool, record_transfer};
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, Result};

/// Command buffers reset, freed, their pools reset, trimmed and destroyed right after the
/// application's fence wait, before the layer may have read their timestamps.
pub(super) fn reset_after_wait(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let record = |cb, value| -> Result<()> {
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        record_transfer(dev, cb, &buffer, value);
        dev.end(cb)
    };
    let pools = [pool(dev)?, pool(dev)?, pool(dev)?, pool(dev)?];
    // Each submission is waited for (the submitter waits on its fence): the application may
    // then reset, free, trim and destroy at once, whatever the layer still has to read.
    let cb = allocate(dev, pools[0], 1)?[0];
    record(cb, 1)?;
    sub.submit("reset-command-buffer", &[cb], None)?;
    check(
        // SAFETY: `cb`'s submission was waited for: it is not pending.
        unsafe { d.reset_command_buffer(cb, vk::CommandBufferResetFlags::RELEASE_RESOURCES) },
        "vkResetCommandBuffer",
    )?;
    record(cb, 2)?;
    sub.submit("after-reset", &[cb], None)?;

    let cb = allocate(dev, pools[1], 1)?[0];
    record(cb, 3)?;
    sub.submit("reset-pool", &[cb], None)?;
    check(
        // SAFETY: the pool's only command buffer completed (its submission was waited for).
        unsafe { d.reset_command_pool(pools[1], vk::CommandPoolResetFlags::RELEASE_RESOURCES) },
        "vkResetCommandPool",
    )?;

    let cb = allocate(dev, pools[2], 1)?[0];
    record(cb, 4)?;
    sub.submit("free-and-trim", &[cb], None)?;
    // SAFETY: `cb` completed; it goes back to the pool it came from, which is then trimmed.
    unsafe {
        d.free_command_buffers(pools[2], &[cb]);
        d.trim_command_pool(pools[2], vk::CommandPoolTrimFlags::empty());
    }

    let cb = allocate(dev, pools[3], 1)?[0];
    record(cb, 5)?;
    sub.submit("destroy-pool", &[cb], None)?;
    // SAFETY: every command buffer of these pools completed.
    unsafe {
        d.destroy_command_pool(pools[3], None);
        d.destroy_command_pool(pools[0], None);
        d.destroy_command_pool(pools[1], None);
        d.destroy_command_pool(pools[2], None);
    }
    let ok = first_word(&buffer) == 5;
    buffer.destroy(dev);
    Ok(ok)
}

/// Eight threads record into their own pools at once, then submit, each under the
/// application's queue lock (Vulkan requires the queue to be externally synchronised);
/// then eight threads record and the main thread submits everything in one batch.
pub(super) fn threads(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    const THREADS: u32 = 8;
    const PER_THREAD: u32 = 16;
    let queue_lock = Mutex::new(());
    let log = Mutex::new(Vec::new());
    let results: Vec<Result<bool>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (queue_lock, log) = (&queue_lock, &log);
                s.spawn(move || -> Result<bool> {
                    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
                    let pool = pool(dev)?;
                    let cbs = allocate(dev, pool, PER_THREAD)?;
                    for (i, &cb) in cbs.iter().enumerate() {
                        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
                        record_transfer(dev, cb, &buffer, t * 1000 + i as u32);
                        dev.end(cb)?;
                    }
                    let fence = dev.fence()?;
                    for (i, &cb) in cbs.iter().enumerate() {
                        let _queue = queue_lock.lock().map_err(|e| e.to_string())?;
                        let info =
                            vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cb));
                        let before = monotonic_ns();
                        check(
                            // SAFETY: the queue is held under the application's lock.
                            unsafe { dev.device.queue_submit(dev.queue, &[info], fence) },
                            "vkQueueSubmit",
                        )?;
                        dev.wait_and_reset(fence)?;
                        let after = monotonic_ns();
                        log.lock().map_err(|e| e.to_string())?.push((
                            format!("thread-{t}-{i}"),
                            cb,
                            before,
                            after,
                        ));
                    }
                    let ok = first_word(&buffer) == t * 1000 + PER_THREAD - 1;
                    // SAFETY: every submission of this thread completed.
                    unsafe {
                        dev.device.destroy_fence(fence, None);
                        dev.device.destroy_command_pool(pool, None);
                    }
                    buffer.destroy(dev);
                    Ok(ok)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a recording thread panicked".into()))
            })
            .collect()
    });
    // The log is in queue order: each entry was pushed under the queue lock.
    for (label, cb, before, after) in log.into_inner().map_err(|e| e.to_string())? {
        sub.note(&label, &[cb], before, after);
    }
    let mut ok = true;
    for r in results {
        ok &= r?;
    }
    Ok(ok && recorded_on_threads_submitted_from_one(dev, sub)?)
}

/// Eight threads record at once into their own pools; the main thread submits it all.
fn recorded_on_threads_submitted_from_one(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    const THREADS: u32 = 8;
    let recorded: Vec<Result<(vk::CommandPool, Buffer, vk::CommandBuffer)>> =
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    s.spawn(
                        move || -> Result<(vk::CommandPool, Buffer, vk::CommandBuffer)> {
                            let buffer =
                                Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
                            let pool = pool(dev)?;
                            let cb = allocate(dev, pool, 1)?[0];
                            dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
                            record_transfer(dev, cb, &buffer, 500 + t);
                            dev.end(cb)?;
                            Ok((pool, buffer, cb))
                        },
                    )
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("a recording thread panicked".into()))
                })
                .collect()
        });
    let recorded = recorded.into_iter().collect::<Result<Vec<_>>>()?;
    let cbs: Vec<vk::CommandBuffer> = recorded.iter().map(|r| r.2).collect();
    sub.submit("eight-threads-one-submit", &cbs, None)?;
    let mut ok = true;
    for (t, (pool, buffer, _)) in recorded.into_iter().enumerate() {
        ok &= first_word(&buffer) == 500 + t as u32;
        // SAFETY: the submission completed.
        unsafe { dev.device.destroy_command_pool(pool, None) };
        buffer.destroy(dev);
    }
    Ok(ok)
}
