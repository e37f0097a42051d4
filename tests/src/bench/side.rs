//! One side of the in-process A/B: an instance and device (with or without the layer) and
//! the objects the measured recordings use, made once.

use ash::vk;

use crate::gpu_work::graphics::{self, area, framebuffer, Image, Pipeline, Target, COLOR};
use crate::vk::{check, Buffer, Device, FillPipeline, Instance, Result};

pub struct Side {
    pub name: &'static str,
    pub inst: Instance,
    pub dev: Device,
    color: Image,
    pub pass: vk::RenderPass,
    pub fb: vk::Framebuffer,
    pub draw: Pipeline,
    data: Buffer,
    pub fill: FillPipeline,
    /// The command buffer the recording rows record into.
    pub cb: vk::CommandBuffer,
    pub fence: vk::Fence,
    /// A timeline semaphore the hand-signalled submissions signal, and its last value.
    pub timeline: vk::Semaphore,
    pub timeline_value: std::cell::Cell<u64>,
}

/// The layer a side with utrace enables.
pub const UTRACE_LAYER: &str = "VK_LAYER_utrace";

impl Side {
    /// A side with utrace (`layered`) or without a layer.
    pub fn new(name: &'static str, layered: bool) -> Result<Side> {
        Side::with_layer(name, layered.then_some(UTRACE_LAYER))
    }

    /// A side with `layer` enabled in `ppEnabledLayerNames`, or none.
    pub fn with_layer(name: &'static str, layer: Option<&str>) -> Result<Side> {
        let layers: Vec<String> = layer.into_iter().map(str::to_string).collect();
        let inst = Instance::new(&layers, &[])?;
        let dev = Device::new(&inst, &[], false)?;
        let color = Image::new(
            &dev,
            COLOR,
            vk::ImageUsageFlags::COLOR_ATTACHMENT,
            vk::SampleCountFlags::TYPE_1,
        )?;
        let pass = graphics::render_pass(&dev, false)?;
        let fb = framebuffer(&dev, pass, &[color.view])?;
        let draw = Pipeline::new(
            &dev,
            Target::Subpass {
                pass,
                subpass: 0,
                depth: false,
            },
        )?;
        let data = Buffer::new(&dev, 4096, vk::BufferUsageFlags::STORAGE_BUFFER)?;
        let fill = FillPipeline::new(&dev, &data)?;
        let cb = dev.command_buffers(1)?[0];
        let fence = dev.fence()?;
        let timeline = dev.timeline_semaphore(0)?;
        Ok(Side {
            name,
            inst,
            dev,
            color,
            pass,
            fb,
            draw,
            data,
            fill,
            cb,
            fence,
            timeline,
            timeline_value: std::cell::Cell::new(0),
        })
    }

    /// Begins the render pass the draw rows record in, with the pipeline bound.
    pub fn begin_pass(&self, cb: vk::CommandBuffer) {
        self.begin_pass_with(cb, vk::SubpassContents::INLINE);
    }

    /// Begins the render pass with `contents`; inline, with the pipeline bound.
    pub fn begin_pass_with(&self, cb: vk::CommandBuffer, contents: vk::SubpassContents) {
        let clear = graphics::clears(false);
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(self.pass)
            .framebuffer(self.fb)
            .render_area(area())
            .clear_values(&clear);
        // SAFETY: `cb` is recording outside a render pass; the objects are this device's.
        unsafe { self.dev.device.cmd_begin_render_pass(cb, &begin, contents) };
        if contents == vk::SubpassContents::INLINE {
            self.draw.bind(&self.dev, cb);
        }
    }

    /// Submits `cbs` one `vkQueueSubmit` each, the last with the side's fence; returns the
    /// median time of one submit call (the wait is not counted). The median, not the mean:
    /// on two cores shared with the driver's threads a submission now and then waits for
    /// the CPU, and the mean of a round would follow those waits.
    pub fn submit_each(&self, cbs: &[vk::CommandBuffer]) -> Result<f64> {
        self.submit_timed(cbs, false)
    }

    /// As [`Side::submit_each`], each batch also signalling the side's timeline semaphore
    /// (the least that a layer which learns when work completed adds to a submission).
    pub fn submit_each_signalled(&self, cbs: &[vk::CommandBuffer]) -> Result<f64> {
        self.submit_timed(cbs, true)
    }

    fn submit_timed(&self, cbs: &[vk::CommandBuffer], signal: bool) -> Result<f64> {
        let d = &self.dev.device;
        let mut times = Vec::with_capacity(cbs.len());
        for (i, cb) in cbs.iter().enumerate() {
            let fence = if i + 1 == cbs.len() {
                self.fence
            } else {
                vk::Fence::null()
            };
            let value = self.timeline_value.get() + 1;
            let mut timeline = vk::TimelineSemaphoreSubmitInfo::default()
                .signal_semaphore_values(std::slice::from_ref(&value));
            let mut submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(cb));
            if signal {
                self.timeline_value.set(value);
                submit = submit
                    .signal_semaphores(std::slice::from_ref(&self.timeline))
                    .push_next(&mut timeline);
            }
            let t = std::time::Instant::now();
            // SAFETY: recorded command buffers not pending; an unsignalled fence; the side's
            // timeline signalled to its next value.
            let result = unsafe { d.queue_submit(self.dev.queue, &[submit], fence) };
            check(result, "vkQueueSubmit")?;
            times.push(t.elapsed().as_nanos() as f64);
        }
        self.dev.wait_and_reset(self.fence)?;
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }

    pub fn destroy(self) {
        // SAFETY: the work of every submission was waited for.
        unsafe {
            let _ = self.dev.device.device_wait_idle();
            self.dev.device.destroy_fence(self.fence, None);
            self.dev.device.destroy_semaphore(self.timeline, None);
            self.dev.device.destroy_framebuffer(self.fb, None);
            self.dev.device.destroy_render_pass(self.pass, None);
        }
        self.draw.destroy(&self.dev);
        self.fill.destroy(&self.dev);
        self.data.destroy(&self.dev);
        self.color.destroy(&self.dev);
        self.dev.destroy();
        self.inst.destroy();
    }
}
