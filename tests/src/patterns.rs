//! Submission patterns real applications use, which the layer must time right: a reusable
//! command buffer resubmitted for many frames, a simultaneous-use one pending twice, pools
//! reset, trimmed and destroyed right after the fence wait, recording on eight threads,
//! submissions without command buffers or with the application's own timeline semaphores,
//! and a multiview render pass.

use std::sync::Mutex;

use ash::vk;

use crate::gpu_work::graphics::{self, Pipeline, Target, COLOR};
use crate::submitter::Submitter;
use crate::vk::{check, monotonic_ns, Buffer, Device, Result};

pub const SCENARIOS: &[&str] = &[
    "resubmit",
    "simultaneous",
    "reset-after-wait",
    "threads",
    "odd-submits",
    "multiview",
    "secondary-reuse",
    "soak",
    "twice-in-one-submit",
    "in-flight",
];

pub fn is_scenario(name: &str) -> bool {
    SCENARIOS.contains(&name)
}

pub fn run(name: &str, dev: &Device, sub: &mut Submitter, frames: u32) -> Result<bool> {
    match name {
        "resubmit" => resubmit(dev, sub, frames),
        "simultaneous" => simultaneous(dev, sub),
        "reset-after-wait" => reset_after_wait(dev, sub),
        "threads" => threads(dev, sub),
        "odd-submits" => odd_submits(dev, sub),
        "multiview" => multiview(dev, sub),
        "secondary-reuse" => secondary_reuse(dev, sub),
        "soak" => soak(dev, sub, frames),
        "twice-in-one-submit" => twice_in_one_submit(dev, sub),
        "in-flight" => in_flight(dev, sub, frames),
        other => Err(format!("unknown scenario {other:?}")),
    }
}

/// A small transfer: fill the first 4 KiB of `buffer` with `value`, then update a word.
fn record_transfer(dev: &Device, cb: vk::CommandBuffer, buffer: &Buffer, value: u32) {
    let barrier = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
    // SAFETY: `cb` is recording; the buffer has TRANSFER_DST and is at least 4 KiB.
    unsafe {
        dev.device
            .cmd_fill_buffer(cb, buffer.buffer, 0, 4096, value);
        dev.device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[barrier],
            &[],
            &[],
        );
        dev.device
            .cmd_update_buffer(cb, buffer.buffer, 0, &value.to_ne_bytes());
    }
}

fn pool(dev: &Device) -> Result<vk::CommandPool> {
    let info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(dev.family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: valid create info.
    check(
        unsafe { dev.device.create_command_pool(&info, None) },
        "vkCreateCommandPool",
    )
}

fn allocate(dev: &Device, pool: vk::CommandPool, count: u32) -> Result<Vec<vk::CommandBuffer>> {
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(count);
    // SAFETY: valid allocate info.
    check(
        unsafe { dev.device.allocate_command_buffers(&info) },
        "vkAllocateCommandBuffers",
    )
}

fn first_word(buffer: &Buffer) -> u32 {
    buffer.words()[0]
}

/// One reusable command buffer, recorded once and submitted `frames` times; each
/// submission waits for its fence and the next follows at once, before the layer has
/// necessarily read the previous one's timestamps.
fn resubmit(dev: &Device, sub: &mut Submitter, frames: u32) -> Result<bool> {
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
    record_transfer(dev, cb, &buffer, 0x1234);
    dev.end(cb)?;
    for i in 0..frames {
        sub.submit(&format!("resubmit-{i}"), &[cb], None)?;
    }
    let ok = first_word(&buffer) == 0x1234;
    // SAFETY: every submission completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &[cb]) };
    buffer.destroy(dev);
    Ok(ok)
}

/// A SIMULTANEOUS_USE command buffer pending in two submissions at once.
fn simultaneous(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
    record_transfer(dev, cb, &buffer, 0x55);
    dev.end(cb)?;
    let fences = [dev.fence()?, dev.fence()?];
    let mut before = [0u64; 2];
    for (k, &fence) in fences.iter().enumerate() {
        let info = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cb));
        before[k] = monotonic_ns();
        // SAFETY: a recorded simultaneous-use command buffer; the fences are unsignalled.
        check(
            unsafe { dev.device.queue_submit(dev.queue, &[info], fence) },
            "vkQueueSubmit",
        )?;
    }
    for (k, &fence) in fences.iter().enumerate() {
        dev.wait_and_reset(fence)?;
        sub.note(
            &format!("simultaneous-{}", k + 1),
            &[cb],
            before[k],
            monotonic_ns(),
        );
    }
    let ok = first_word(&buffer) == 0x55;
    // SAFETY: both submissions completed.
    unsafe {
        for f in fences {
            dev.device.destroy_fence(f, None);
        }
        dev.device.free_command_buffers(dev.pool, &[cb]);
    }
    buffer.destroy(dev);
    Ok(ok)
}

/// Command buffers reset, freed, their pools reset, trimmed and destroyed right after the
/// application's fence wait, before the layer may have read their timestamps.
fn reset_after_wait(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let record = |cb, value| -> Result<()> {
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        record_transfer(dev, cb, &buffer, value);
        dev.end(cb)
    };
    let pools = [pool(dev)?, pool(dev)?, pool(dev)?, pool(dev)?];
    // SAFETY (every block below): the submissions were waited for; the application may
    // reset, free, trim and destroy at once, whatever the layer still has to read.
    let cb = allocate(dev, pools[0], 1)?[0];
    record(cb, 1)?;
    sub.submit("reset-command-buffer", &[cb], None)?;
    check(
        unsafe { d.reset_command_buffer(cb, vk::CommandBufferResetFlags::RELEASE_RESOURCES) },
        "vkResetCommandBuffer",
    )?;
    record(cb, 2)?;
    sub.submit("after-reset", &[cb], None)?;

    let cb = allocate(dev, pools[1], 1)?[0];
    record(cb, 3)?;
    sub.submit("reset-pool", &[cb], None)?;
    check(
        unsafe { d.reset_command_pool(pools[1], vk::CommandPoolResetFlags::RELEASE_RESOURCES) },
        "vkResetCommandPool",
    )?;

    let cb = allocate(dev, pools[2], 1)?[0];
    record(cb, 4)?;
    sub.submit("free-and-trim", &[cb], None)?;
    unsafe {
        d.free_command_buffers(pools[2], &[cb]);
        d.trim_command_pool(pools[2], vk::CommandPoolTrimFlags::empty());
    }

    let cb = allocate(dev, pools[3], 1)?[0];
    record(cb, 5)?;
    sub.submit("destroy-pool", &[cb], None)?;
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
/// application's queue lock (Vulkan requires the queue to be externally synchronised).
fn threads(dev: &Device, sub: &mut Submitter) -> Result<bool> {
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
                        // SAFETY: the queue is held under the application's lock.
                        check(
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
    Ok(ok)
}

/// Submissions without command buffers (fence only, semaphores only), several batches in
/// one call, the application's own timeline semaphore in the chain, the same through
/// vkQueueSubmit2: only batches with command buffers are traced, and every call counts as a
/// submission. (vkQueueBindSparse is not intercepted at all; Lavapipe has no sparse
/// binding to try it on.)
fn odd_submits(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    // One buffer per command buffer: batches of one call are not ordered with each other.
    let buffers = (0..4)
        .map(|_| Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST))
        .collect::<Result<Vec<_>>>()?;
    let cbs = dev.command_buffers(4)?;
    for (i, &cb) in cbs.iter().enumerate() {
        dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
        record_transfer(dev, cb, &buffers[i], i as u32 + 10);
        dev.end(cb)?;
    }
    let fence = dev.fence()?;
    let binary = dev.semaphore()?;
    let mut type_info = vk::SemaphoreTypeCreateInfo::default()
        .semaphore_type(vk::SemaphoreType::TIMELINE)
        .initial_value(0);
    // SAFETY: valid create info; timeline semaphores are core 1.2.
    let timeline = check(
        unsafe {
            d.create_semaphore(
                &vk::SemaphoreCreateInfo::default().push_next(&mut type_info),
                None,
            )
        },
        "vkCreateSemaphore",
    )?;
    // SAFETY (every block below): valid submissions on the externally synchronised queue;
    // each is waited for before the next uses its objects.
    // 1: nothing but a fence.
    check(
        unsafe { d.queue_submit(dev.queue, &[], fence) },
        "vkQueueSubmit",
    )?;
    dev.wait_and_reset(fence)?;
    // 2: a batch that only signals a semaphore, and 3: one that waits on it with work.
    let signal = [binary];
    check(
        unsafe {
            d.queue_submit(
                dev.queue,
                &[vk::SubmitInfo::default().signal_semaphores(&signal)],
                vk::Fence::null(),
            )
        },
        "vkQueueSubmit",
    )?;
    let stages = [vk::PipelineStageFlags::TRANSFER];
    let before = monotonic_ns();
    let info = vk::SubmitInfo::default()
        .wait_semaphores(&signal)
        .wait_dst_stage_mask(&stages)
        .command_buffers(&cbs[..1]);
    check(
        unsafe { d.queue_submit(dev.queue, &[info], fence) },
        "vkQueueSubmit",
    )?;
    dev.wait_and_reset(fence)?;
    sub.note("after-semaphore", &cbs[..1], before, monotonic_ns());
    // 4: two batches in one call, the second signalling the application's timeline.
    let values = [1u64];
    let timelines = [timeline];
    let mut timeline_info =
        vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
    let before = monotonic_ns();
    let infos = [
        vk::SubmitInfo::default().command_buffers(&cbs[1..2]),
        vk::SubmitInfo::default()
            .command_buffers(&cbs[2..3])
            .signal_semaphores(&timelines)
            .push_next(&mut timeline_info),
    ];
    check(
        unsafe { d.queue_submit(dev.queue, &infos, vk::Fence::null()) },
        "vkQueueSubmit",
    )?;
    let wait = vk::SemaphoreWaitInfo::default()
        .semaphores(&timelines)
        .values(&values);
    check(
        unsafe { d.wait_semaphores(&wait, 10_000_000_000) },
        "vkWaitSemaphores",
    )?;
    sub.note("two-batches-timeline", &cbs[1..3], before, monotonic_ns());
    // 5: vkQueueSubmit2 with nothing but a fence, 6: with work and a timeline signal.
    check(
        unsafe { d.queue_submit2(dev.queue, &[], fence) },
        "vkQueueSubmit2",
    )?;
    dev.wait_and_reset(fence)?;
    let cb_info = [vk::CommandBufferSubmitInfo::default().command_buffer(cbs[3])];
    let signal2 = [vk::SemaphoreSubmitInfo::default()
        .semaphore(timeline)
        .value(2)
        .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
    let before = monotonic_ns();
    let info2 = vk::SubmitInfo2::default()
        .command_buffer_infos(&cb_info)
        .signal_semaphore_infos(&signal2);
    check(
        unsafe { d.queue_submit2(dev.queue, &[info2], vk::Fence::null()) },
        "vkQueueSubmit2",
    )?;
    let values2 = [2u64];
    let wait2 = vk::SemaphoreWaitInfo::default()
        .semaphores(&timelines)
        .values(&values2);
    check(
        unsafe { d.wait_semaphores(&wait2, 10_000_000_000) },
        "vkWaitSemaphores",
    )?;
    sub.note("submit2-timeline", &cbs[3..4], before, monotonic_ns());
    let ok = buffers
        .iter()
        .enumerate()
        .all(|(i, b)| first_word(b) == i as u32 + 10);
    // SAFETY: everything completed.
    unsafe {
        d.destroy_semaphore(binary, None);
        d.destroy_semaphore(timeline, None);
        d.destroy_fence(fence, None);
        d.free_command_buffers(dev.pool, &cbs);
    }
    for b in buffers {
        b.destroy(dev);
    }
    Ok(ok)
}

/// A draw in a multiview render pass (two views): every timestamp written inside it takes
/// one query per view.
fn multiview(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let image = graphics::Image::layered(dev, COLOR, 2)?;
    let pass = graphics::multiview_render_pass(dev, 0b11)?;
    let fb = graphics::framebuffer(dev, pass, &[image.view])?;
    let pipeline = Pipeline::new(
        dev,
        Target::Subpass {
            pass,
            subpass: 0,
            depth: false,
        },
    )?;
    let clear_values = graphics::clears(false);
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    let begin = vk::RenderPassBeginInfo::default()
        .render_pass(pass)
        .framebuffer(fb)
        .render_area(graphics::area())
        .clear_values(&clear_values);
    // SAFETY: `cb` is recording; the pipeline was made for this multiview render pass.
    unsafe {
        d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
        pipeline.bind(dev, cb);
        d.cmd_draw(cb, 3, 1, 0, 0);
        d.cmd_end_render_pass(cb);
    }
    dev.end(cb)?;
    sub.submit("multiview", &[cb], None)?;
    // SAFETY: the submission completed.
    unsafe {
        d.free_command_buffers(dev.pool, &[cb]);
        d.destroy_framebuffer(fb, None);
        d.destroy_render_pass(pass, None);
    }
    pipeline.destroy(dev);
    image.destroy(dev);
    Ok(true)
}

/// A reusable secondary executed from two different primaries in turn, a reusable primary
/// executing it submitted twice, and a simultaneous-use secondary executed twice in one
/// render pass instance (which the layer leaves untimed).
fn secondary_reuse(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    use ash::vk::Handle;
    let d = &dev.device;
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let secondary = |usage,
                     inheritance: &vk::CommandBufferInheritanceInfo<'_>,
                     record: &dyn Fn(vk::CommandBuffer)|
     -> Result<vk::CommandBuffer> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(dev.pool)
            .level(vk::CommandBufferLevel::SECONDARY)
            .command_buffer_count(1);
        // SAFETY: valid allocate and begin infos; ended below.
        unsafe {
            let cb = check(
                d.allocate_command_buffers(&info),
                "vkAllocateCommandBuffers",
            )?[0];
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(usage)
                .inheritance_info(inheritance);
            check(d.begin_command_buffer(cb, &begin), "vkBeginCommandBuffer")?;
            record(cb);
            check(d.end_command_buffer(cb), "vkEndCommandBuffer")?;
            Ok(cb)
        }
    };
    let outside = vk::CommandBufferInheritanceInfo::default();
    let reusable = secondary(vk::CommandBufferUsageFlags::empty(), &outside, &|cb| {
        record_transfer(dev, cb, &buffer, 77)
    })?;
    let primaries = dev.command_buffers(2)?;
    let execute = |primary, usage| -> Result<()> {
        dev.begin(primary, usage)?;
        // SAFETY: `primary` is recording outside a render pass; the secondary was recorded
        // for that.
        unsafe { d.cmd_execute_commands(primary, &[reusable]) };
        dev.end(primary)
    };
    let name = |cb: vk::CommandBuffer| format!("{:#x}", cb.as_raw());
    // From one primary, then (re-recorded into) another.
    execute(primaries[0], vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    sub.submit("secondary-from-first", &primaries[..1], None)?;
    execute(primaries[1], vk::CommandBufferUsageFlags::empty())?;
    sub.submit("secondary-from-second", &primaries[1..], None)?;
    // The second primary is reusable: submitted again, the secondary runs again.
    sub.submit("secondary-again", &primaries[1..], None)?;
    for s in sub.log.iter_mut().rev().take(3) {
        s.secondaries = vec![name(reusable)];
    }

    // A simultaneous-use secondary executed twice in one render pass instance.
    let image = graphics::Image::new(
        dev,
        COLOR,
        vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
        vk::SampleCountFlags::TYPE_1,
    )?;
    let pass = graphics::render_pass(dev, false)?;
    let fb = graphics::framebuffer(dev, pass, &[image.view])?;
    let pipeline = Pipeline::new(
        dev,
        Target::Subpass {
            pass,
            subpass: 0,
            depth: false,
        },
    )?;
    let in_pass = vk::CommandBufferInheritanceInfo::default()
        .render_pass(pass)
        .subpass(0)
        .framebuffer(fb);
    let twice = secondary(
        vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE
            | vk::CommandBufferUsageFlags::SIMULTANEOUS_USE,
        &in_pass,
        &|cb| {
            pipeline.bind(dev, cb);
            // SAFETY: `cb` continues the render pass with the pipeline bound.
            unsafe { d.cmd_draw(cb, 3, 1, 0, 0) };
        },
    )?;
    let clear_values = graphics::clears(false);
    let primary = dev.command_buffers(1)?[0];
    dev.begin(primary, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    let begin = vk::RenderPassBeginInfo::default()
        .render_pass(pass)
        .framebuffer(fb)
        .render_area(graphics::area())
        .clear_values(&clear_values);
    // SAFETY: `primary` is recording; the secondary may run twice (simultaneous use).
    unsafe {
        d.cmd_begin_render_pass(
            primary,
            &begin,
            vk::SubpassContents::SECONDARY_COMMAND_BUFFERS,
        );
        d.cmd_execute_commands(primary, &[twice, twice]);
        d.cmd_end_render_pass(primary);
    }
    dev.end(primary)?;
    sub.submit("simultaneous-secondary-twice", &[primary], None)?;

    let ok = first_word(&buffer) == 77;
    // SAFETY: every submission completed.
    unsafe {
        d.free_command_buffers(dev.pool, &primaries);
        d.free_command_buffers(dev.pool, &[reusable, twice, primary]);
        d.destroy_framebuffer(fb, None);
        d.destroy_render_pass(pass, None);
    }
    pipeline.destroy(dev);
    image.destroy(dev);
    buffer.destroy(dev);
    Ok(ok)
}

/// `count` submissions of two reusable command buffers, not logged one by one; resident
/// memory sampled ten times along the way (the first sample after a warm-up tenth).
fn soak(dev: &Device, sub: &mut Submitter, count: u32) -> Result<bool> {
    let buffers = [
        Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?,
        Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?,
    ];
    let cbs = dev.command_buffers(2)?;
    for (i, &cb) in cbs.iter().enumerate() {
        dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
        record_transfer(dev, cb, &buffers[i], i as u32 + 1);
        dev.end(cb)?;
    }
    let tenth = (count / 10).max(1);
    for i in 0..count {
        sub.submit_unlogged(&cbs[i as usize % 2..i as usize % 2 + 1])?;
        if (i + 1) % tenth == 0 {
            sub.rss_kib.push(crate::report::rss_kib());
        }
    }
    let ok = first_word(&buffers[0]) == 1 && first_word(&buffers[1]) == 2;
    // SAFETY: every submission completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &cbs) };
    for b in buffers {
        b.destroy(dev);
    }
    Ok(ok)
}

/// A simultaneous-use command buffer run twice by one call: twice in one batch, in two
/// batches of one vkQueueSubmit, and twice through vkQueueSubmit2.
fn twice_in_one_submit(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
    record_transfer(dev, cb, &buffer, 9);
    dev.end(cb)?;
    let fence = dev.fence()?;
    let pair = [cb, cb];
    // SAFETY (all three): a simultaneous-use command buffer may run twice in one call; the
    // fence is waited for and reset after each.
    let before = monotonic_ns();
    let info = vk::SubmitInfo::default().command_buffers(&pair);
    check(
        unsafe { d.queue_submit(dev.queue, &[info], fence) },
        "vkQueueSubmit",
    )?;
    dev.wait_and_reset(fence)?;
    sub.note("twice-in-one-batch", &pair, before, monotonic_ns());

    let before = monotonic_ns();
    let one = vk::SubmitInfo::default().command_buffers(&pair[..1]);
    check(
        unsafe { d.queue_submit(dev.queue, &[one, one], fence) },
        "vkQueueSubmit",
    )?;
    dev.wait_and_reset(fence)?;
    sub.note("twice-in-two-batches", &pair, before, monotonic_ns());

    let infos = [vk::CommandBufferSubmitInfo::default().command_buffer(cb); 2];
    let before = monotonic_ns();
    let info2 = vk::SubmitInfo2::default().command_buffer_infos(&infos);
    check(
        unsafe { d.queue_submit2(dev.queue, &[info2], fence) },
        "vkQueueSubmit2",
    )?;
    dev.wait_and_reset(fence)?;
    sub.note("twice-through-submit2", &pair, before, monotonic_ns());

    let ok = first_word(&buffer) == 9;
    // SAFETY: every submission completed.
    unsafe {
        d.destroy_fence(fence, None);
        d.free_command_buffers(dev.pool, &[cb]);
    }
    buffer.destroy(dev);
    Ok(ok)
}

/// `count` submissions made back to back without waiting, then only the last one's fence
/// is waited for and the device is destroyed at once: the layer has most of the batches
/// still to read when vkDestroyDevice comes.
fn in_flight(dev: &Device, sub: &mut Submitter, count: u32) -> Result<bool> {
    let d = &dev.device;
    let buffers = (0..count)
        .map(|_| Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST))
        .collect::<Result<Vec<_>>>()?;
    let cbs = dev.command_buffers(count)?;
    for (i, &cb) in cbs.iter().enumerate() {
        dev.begin(cb, vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
        record_transfer(dev, cb, &buffers[i], i as u32);
        dev.end(cb)?;
    }
    let fence = dev.fence()?;
    let mut before = Vec::with_capacity(cbs.len());
    for (i, cb) in cbs.iter().enumerate() {
        let last = i + 1 == cbs.len();
        let info = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(cb));
        before.push(monotonic_ns());
        // SAFETY: recorded one-time command buffers, each submitted once; the fence only
        // with the last (the queue completes in submission order).
        check(
            unsafe {
                d.queue_submit(
                    dev.queue,
                    &[info],
                    if last { fence } else { vk::Fence::null() },
                )
            },
            "vkQueueSubmit",
        )?;
    }
    dev.wait_and_reset(fence)?;
    let after = monotonic_ns();
    for (i, cb) in cbs.iter().enumerate() {
        sub.note(
            &format!("in-flight-{i}"),
            std::slice::from_ref(cb),
            before[i],
            after,
        );
    }
    let ok = buffers
        .iter()
        .enumerate()
        .all(|(i, b)| first_word(b) == i as u32);
    // SAFETY: every submission completed (the queue finished the last one).
    unsafe {
        d.destroy_fence(fence, None);
        d.free_command_buffers(dev.pool, &cbs);
    }
    for b in buffers {
        b.destroy(dev);
    }
    Ok(ok)
}
