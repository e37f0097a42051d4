//! Work whose pipeline statistics are known (for `GPU_TRACE_COUNTERS=pipeline`): in one
//! one-time command buffer, a render pass with one draw of 6 vertices and 4 instances (24
//! vertex shader invocations, 8 triangles), a dispatch of 5 x 3 x 1 groups of 64
//! invocations (960), and a render pass of two subpasses drawing one triangle each; then a
//! reusable command buffer of one indirect dispatch, run three times with 1, 2 and 3
//! groups.

use ash::vk;

use super::graphics::{self, area, clears, framebuffer, full_barrier, Pipeline, Target};
use super::scene_target::SceneTarget;
use super::{free, record_once, WORDS};
use crate::submitter::Submitter;
use crate::vk::{Buffer, Device, FillPipeline, Result};

pub fn counters(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let target = SceneTarget::new(dev, true)?;
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let fill = FillPipeline::new(dev, &data)?;
    let pass2 = graphics::render_pass2_two_subpasses(dev)?;
    let fb2 = framebuffer(dev, pass2, &[target.color.view])?;
    let subpass = |subpass| {
        Pipeline::new(
            dev,
            Target::Subpass {
                pass: pass2,
                subpass,
                depth: false,
            },
        )
    };
    let (first, second) = (subpass(0)?, subpass(1)?);
    let clear_values = clears(false);
    let cb = record_once(dev, |cb| {
        let begin = target.begin_info();
        let begin2 = vk::RenderPassBeginInfo::default()
            .render_pass(pass2)
            .framebuffer(fb2)
            .render_area(area())
            .clear_values(&clear_values);
        // SAFETY: `cb` is recording; every object belongs to this device.
        unsafe {
            d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
            target.pipeline.bind(dev, cb);
            d.cmd_draw(cb, 6, 4, 0, 0);
            d.cmd_end_render_pass(cb);
        }
        fill.record_bindings(dev, cb, &fill, 0, WORDS);
        // SAFETY: `cb` is recording outside a render pass, the fill pipeline bound.
        unsafe { d.cmd_dispatch(cb, 5, 3, 1) };
        full_barrier(dev, cb);
        // SAFETY: as above.
        unsafe {
            d.cmd_begin_render_pass(cb, &begin2, vk::SubpassContents::INLINE);
            first.bind(dev, cb);
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_next_subpass(cb, vk::SubpassContents::INLINE);
            second.bind(dev, cb);
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_end_render_pass(cb);
        }
        Ok(())
    })?;
    sub.submit("counted", &[cb], None)?;
    // A reusable command buffer of one indirect dispatch, submitted three times, each
    // right after the last completed, its group count written before each: 1, 2, 3
    // groups of 64. Each run's counters must be its own.
    let indirect = Buffer::new(dev, 64, vk::BufferUsageFlags::INDIRECT_BUFFER)?;
    let reusable = dev.command_buffers(1)?[0];
    dev.begin(reusable, vk::CommandBufferUsageFlags::empty())?;
    fill.record_bindings(dev, reusable, &fill, 0, WORDS);
    // SAFETY: `reusable` is recording with the fill pipeline bound; the buffer holds a
    // dispatch command when each run executes.
    unsafe { d.cmd_dispatch_indirect(reusable, indirect.buffer, 0) };
    dev.end(reusable)?;
    for groups in 1..=3u32 {
        // SAFETY: the mapping holds 3 words; the last run completed (its fence waited for).
        unsafe {
            std::ptr::copy_nonoverlapping([groups, 1, 1].as_ptr(), indirect.mapped as *mut u32, 3)
        };
        sub.submit("counted-reusable", &[reusable], None)?;
    }
    free(dev, &[cb, reusable]);
    indirect.destroy(dev);
    // SAFETY: no pending work uses these objects.
    unsafe {
        d.destroy_framebuffer(fb2, None);
        d.destroy_render_pass(pass2, None);
    }
    first.destroy(dev);
    second.destroy(dev);
    fill.destroy(dev);
    data.destroy(dev);
    target.destroy(dev);
    Ok(true)
}

/// The application's own pipeline statistics queries beside the layer's: one around a
/// render pass of one draw (6 vertices, 4 instances), one inside a render pass around the
/// middle one of three draws (6, 3, then 3 x 2 vertices). Each must read what it measured
/// (24 and 3 vertex invocations) whatever the layer does.
pub fn counters_own_query(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let target = SceneTarget::new(dev, true)?;
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::PIPELINE_STATISTICS)
        .query_count(2)
        .pipeline_statistics(vk::QueryPipelineStatisticFlags::VERTEX_SHADER_INVOCATIONS);
    // SAFETY: a valid create info; pipelineStatisticsQuery is on (the layer's counters).
    let pool = unsafe { d.create_query_pool(&info, None) }.map_err(|e| e.to_string())?;
    let cb = record_once(dev, |cb| {
        let begin = target.begin_info();
        // SAFETY: `cb` is recording; the pool's queries are reset before use.
        unsafe {
            d.cmd_reset_query_pool(cb, pool, 0, 2);
            d.cmd_begin_query(cb, pool, 0, vk::QueryControlFlags::empty());
            d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
            target.pipeline.bind(dev, cb);
            d.cmd_draw(cb, 6, 4, 0, 0);
            d.cmd_end_render_pass(cb);
            d.cmd_end_query(cb, pool, 0);
            d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
            target.pipeline.bind(dev, cb);
            d.cmd_draw(cb, 6, 1, 0, 0);
            d.cmd_begin_query(cb, pool, 1, vk::QueryControlFlags::empty());
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_end_query(cb, pool, 1);
            d.cmd_draw(cb, 3, 2, 0, 0);
            d.cmd_end_render_pass(cb);
        }
        Ok(())
    })?;
    sub.submit("own-query", &[cb], None)?;
    let mut values = [0u64; 2];
    // SAFETY: the submission completed; two 64-bit values, one per query.
    let read =
        unsafe { d.get_query_pool_results(pool, 0, &mut values, vk::QueryResultFlags::TYPE_64) };
    let ok = read.is_ok() && values == [24, 3];
    if !ok {
        eprintln!("utrace-workload: the application's own statistics read {read:?} {values:?}, not [24, 3]");
    }
    free(dev, &[cb]);
    // SAFETY: no pending work uses the pool.
    unsafe { d.destroy_query_pool(pool, None) };
    target.destroy(dev);
    Ok(ok)
}

/// A reusable command buffer of 40 dispatches, submitted once: more statistics than its
/// run slot holds after its timestamps (see `GPU_TRACE_COUNTERS` in docs/formats.md).
pub fn counters_unread(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )?;
    let fill = FillPipeline::new(dev, &data)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
    fill.record_bindings(dev, cb, &fill, 0, WORDS);
    for _ in 0..40 {
        // SAFETY: `cb` is recording outside a render pass, the fill pipeline bound.
        unsafe { dev.device.cmd_dispatch(cb, 1, 1, 1) };
    }
    dev.end(cb)?;
    sub.submit("counters-unread", &[cb], None)?;
    free(dev, &[cb]);
    fill.destroy(dev);
    data.destroy(dev);
    Ok(true)
}

/// One full-screen triangle (3 vertices whose triangle covers the whole 64 x 64 target) in
/// a render pass of one draw: how many fragment shader invocations a driver counts for
/// W x H pixels (see `GPU_TRACE_COUNTERS` in docs/formats.md).
pub fn counters_full_screen(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let target = SceneTarget::new(dev, false)?;
    let full_screen = Pipeline::full_screen(
        dev,
        Target::Subpass {
            pass: target.pass,
            subpass: 0,
            depth: false,
        },
    )?;
    let cb = record_once(dev, |cb| {
        let begin = target.begin_info();
        // SAFETY: `cb` is recording; every object belongs to this device.
        unsafe {
            dev.device
                .cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
            full_screen.bind(dev, cb);
            dev.device.cmd_draw(cb, 3, 1, 0, 0);
            dev.device.cmd_end_render_pass(cb);
        }
        Ok(())
    })?;
    sub.submit("full-screen", &[cb], None)?;
    free(dev, &[cb]);
    full_screen.destroy(dev);
    target.destroy(dev);
    Ok(true)
}

/// The indices of [`counters_indexed`]: 4 triangles over 4 distinct vertices (a quad, twice).
const QUAD_TWICE: [u32; 12] = [0, 1, 2, 2, 1, 3, 0, 1, 2, 2, 1, 3];

/// One indexed draw of 12 indices naming 4 distinct vertices: a driver may shade a vertex
/// once however often it is named, so its vertex shader invocations lie between 4 and 12.
pub fn counters_indexed(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let target = SceneTarget::new(dev, false)?;
    let indices = Buffer::new(dev, 48, vk::BufferUsageFlags::INDEX_BUFFER)?;
    // SAFETY: the mapping holds 12 words; no work uses the buffer yet.
    unsafe { std::ptr::copy_nonoverlapping(QUAD_TWICE.as_ptr(), indices.mapped as *mut u32, 12) };
    let cb = record_once(dev, |cb| {
        let begin = target.begin_info();
        // SAFETY: `cb` is recording; every object belongs to this device and the index
        // buffer holds 12 indices.
        unsafe {
            let d = &dev.device;
            d.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
            target.pipeline.bind(dev, cb);
            d.cmd_bind_index_buffer(cb, indices.buffer, 0, vk::IndexType::UINT32);
            d.cmd_draw_indexed(cb, 12, 1, 0, 0, 0);
            d.cmd_end_render_pass(cb);
        }
        Ok(())
    })?;
    sub.submit("indexed", &[cb], None)?;
    free(dev, &[cb]);
    indices.destroy(dev);
    target.destroy(dev);
    Ok(true)
}

/// A reusable command buffer counted run after run: a render pass of 2 draws of 3
/// vertices, submitted three times, each right after the last completed (before the layer
/// has necessarily read the last run); then re-recorded with 3 draws and submitted three
/// times more; then a simultaneous-use one of 1 draw, submitted once; then a one-time one
/// of 34 render passes of 1 draw.
pub fn counters_reruns(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let d = &dev.device;
    let target = SceneTarget::new(dev, false)?;
    let record = |cb, usage, draws| -> Result<()> {
        dev.begin(cb, usage)?;
        // SAFETY: `cb` is recording; every object belongs to this device.
        unsafe {
            d.cmd_begin_render_pass(cb, &target.begin_info(), vk::SubpassContents::INLINE);
            target.pipeline.bind(dev, cb);
            for _ in 0..draws {
                d.cmd_draw(cb, 3, 1, 0, 0);
            }
            d.cmd_end_render_pass(cb);
        }
        dev.end(cb)
    };
    let cb = dev.command_buffers(1)?[0];
    for draws in [2, 3] {
        record(cb, vk::CommandBufferUsageFlags::empty(), draws)?;
        for run in 0..3 {
            sub.submit(&format!("reruns-{draws}-{run}"), &[cb], None)?;
        }
    }
    let simultaneous = dev.command_buffers(1)?[0];
    record(
        simultaneous,
        vk::CommandBufferUsageFlags::SIMULTANEOUS_USE,
        1,
    )?;
    sub.submit("reruns-simultaneous", &[simultaneous], None)?;
    // One-time, 34 render passes of 1 draw: more than a recording's hardware counter pool
    // holds (32).
    let many = record_once(dev, |cb| {
        for _ in 0..34 {
            // SAFETY: `cb` is recording; every object belongs to this device.
            unsafe {
                d.cmd_begin_render_pass(cb, &target.begin_info(), vk::SubpassContents::INLINE);
                target.pipeline.bind(dev, cb);
                d.cmd_draw(cb, 3, 1, 0, 0);
                d.cmd_end_render_pass(cb);
            }
        }
        Ok(())
    })?;
    sub.submit("reruns-many-passes", &[many], None)?;
    free(dev, &[cb, simultaneous, many]);
    target.destroy(dev);
    Ok(true)
}
