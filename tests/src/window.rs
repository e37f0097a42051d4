//! An X11 window (under Xvfb in the tests) and a swapchain on it, so that the workload
//! presents real frames: the layer counts frames at `vkQueuePresentKHR`.

use std::ffi::CStr;
use std::num::NonZeroU32;
use std::ptr::NonNull;

use ash::vk;
use raw_window_handle::{RawDisplayHandle, RawWindowHandle, XcbDisplayHandle, XcbWindowHandle};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt, CreateWindowAux, WindowClass};
use x11rb::xcb_ffi::XCBConnection;

use crate::vk::{check, Device, Instance, Result};

pub const WIDTH: u32 = 320;
pub const HEIGHT: u32 = 240;

pub struct Window {
    conn: XCBConnection,
    screen: usize,
    window: u32,
}

impl Window {
    /// Opens a window on `$DISPLAY`.
    pub fn open() -> Result<Window> {
        let display = std::env::var("DISPLAY").unwrap_or_default();
        if display.is_empty() {
            return Err("this scenario needs an X display: DISPLAY is not set".into());
        }
        let (conn, screen) = XCBConnection::connect(None)
            .map_err(|e| format!("cannot connect to X display {display:?}: {e}"))?;
        let window = conn.generate_id().map_err(|e| e.to_string())?;
        let root = &conn.setup().roots[screen];
        conn.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            window,
            root.root,
            0,
            0,
            WIDTH as u16,
            HEIGHT as u16,
            0,
            WindowClass::INPUT_OUTPUT,
            root.root_visual,
            &CreateWindowAux::new().background_pixel(root.black_pixel),
        )
        .map_err(|e| e.to_string())?;
        conn.map_window(window).map_err(|e| e.to_string())?;
        conn.flush().map_err(|e| e.to_string())?;
        Ok(Window {
            conn,
            screen,
            window,
        })
    }

    fn handles(&self) -> Result<(RawDisplayHandle, RawWindowHandle)> {
        let display = XcbDisplayHandle::new(
            NonNull::new(self.conn.get_raw_xcb_connection()),
            self.screen as i32,
        );
        let window = XcbWindowHandle::new(NonZeroU32::new(self.window).ok_or("null window id")?);
        Ok((display.into(), window.into()))
    }

    /// Instance extensions a surface on this window needs.
    pub fn required_extensions(&self) -> Result<Vec<&'static CStr>> {
        let (display, _) = self.handles()?;
        let names = check(
            ash_window::enumerate_required_extensions(display),
            "ash_window::enumerate_required_extensions",
        )?;
        // SAFETY: ash-window returns pointers to static NUL-terminated names.
        Ok(names
            .iter()
            .map(|&p| unsafe { CStr::from_ptr(p) })
            .collect())
    }
}

pub struct Swapchain {
    surface_fn: ash::khr::surface::Instance,
    swapchain_fn: ash::khr::swapchain::Device,
    surface: vk::SurfaceKHR,
    pub swapchain: vk::SwapchainKHR,
    pub images: Vec<vk::Image>,
    pub extent: vk::Extent2D,
    /// One per image: signalled by the frame's submission, waited by its present.
    pub rendered: Vec<vk::Semaphore>,
    pub acquired: vk::Semaphore,
}

impl Swapchain {
    pub fn new(inst: &Instance, dev: &Device, window: &Window) -> Result<Swapchain> {
        let (display, win) = window.handles()?;
        // SAFETY: the window outlives the surface (both live for the workload's run).
        let surface = check(
            unsafe { ash_window::create_surface(&inst.entry, &inst.instance, display, win, None) },
            "vkCreateXcbSurfaceKHR",
        )?;
        let surface_fn = ash::khr::surface::Instance::new(&inst.entry, &inst.instance);
        // SAFETY: queries on a live physical device and surface.
        let (supported, caps, formats) = unsafe {
            (
                check(
                    surface_fn.get_physical_device_surface_support(
                        dev.physical,
                        dev.family,
                        surface,
                    ),
                    "vkGetPhysicalDeviceSurfaceSupportKHR",
                )?,
                check(
                    surface_fn.get_physical_device_surface_capabilities(dev.physical, surface),
                    "vkGetPhysicalDeviceSurfaceCapabilitiesKHR",
                )?,
                check(
                    surface_fn.get_physical_device_surface_formats(dev.physical, surface),
                    "vkGetPhysicalDeviceSurfaceFormatsKHR",
                )?,
            )
        };
        if !supported {
            return Err("the queue family cannot present to the window".into());
        }
        let format = formats.first().ok_or("the surface has no formats")?;
        let extent = if caps.current_extent.width != u32::MAX {
            caps.current_extent
        } else {
            vk::Extent2D {
                width: WIDTH,
                height: HEIGHT,
            }
        };
        let mut count = caps.min_image_count.max(2);
        if caps.max_image_count != 0 {
            count = count.min(caps.max_image_count);
        }
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(surface)
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::COLOR_ATTACHMENT)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(vk::PresentModeKHR::FIFO)
            .clipped(true);
        let swapchain_fn = ash::khr::swapchain::Device::new(&inst.instance, &dev.device);
        // SAFETY: valid create info for a supported surface.
        let swapchain = check(
            unsafe { swapchain_fn.create_swapchain(&info, None) },
            "vkCreateSwapchainKHR",
        )?;
        // SAFETY: a live swapchain.
        let images = check(
            unsafe { swapchain_fn.get_swapchain_images(swapchain) },
            "vkGetSwapchainImagesKHR",
        )?;
        let rendered = images
            .iter()
            .map(|_| dev.semaphore())
            .collect::<Result<Vec<_>>>()?;
        let acquired = dev.semaphore()?;
        Ok(Swapchain {
            surface_fn,
            swapchain_fn,
            surface,
            swapchain,
            images,
            extent,
            rendered,
            acquired,
        })
    }

    /// The next image's index; `acquired` is signalled when it is ready.
    pub fn acquire(&self) -> Result<u32> {
        // SAFETY: a live swapchain; `acquired` is unsignalled (its last wait completed).
        let (index, _suboptimal) = check(
            unsafe {
                self.swapchain_fn.acquire_next_image(
                    self.swapchain,
                    5_000_000_000,
                    self.acquired,
                    vk::Fence::null(),
                )
            },
            "vkAcquireNextImageKHR",
        )?;
        Ok(index)
    }

    /// Records a clear of `image` to `shade` and its transition to PRESENT_SRC.
    pub fn record_clear(&self, dev: &Device, cb: vk::CommandBuffer, index: u32, shade: f32) {
        let image = self.images[index as usize];
        let range = vk::ImageSubresourceRange::default()
            .aspect_mask(vk::ImageAspectFlags::COLOR)
            .level_count(1)
            .layer_count(1);
        let to_transfer = vk::ImageMemoryBarrier::default()
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image)
            .subresource_range(range);
        let to_present = vk::ImageMemoryBarrier::default()
            .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .new_layout(vk::ImageLayout::PRESENT_SRC_KHR)
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image)
            .subresource_range(range);
        let color = vk::ClearColorValue {
            float32: [shade, 0.3, 0.6, 1.0],
        };
        let d = &dev.device;
        // SAFETY: `cb` is recording; the image is the acquired swapchain image.
        unsafe {
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_transfer],
            );
            d.cmd_clear_color_image(
                cb,
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &color,
                &[range],
            );
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_present],
            );
        }
    }

    /// Records a blit of `src` (a `size`-square TRANSFER_SRC color image) to the whole of
    /// image `index`, with its transitions to TRANSFER_DST and then PRESENT_SRC.
    pub fn record_blit(
        &self,
        dev: &Device,
        cb: vk::CommandBuffer,
        index: u32,
        src: vk::Image,
        size: u32,
    ) {
        use crate::gpu_work::graphics::{layers, transition};
        let image = self.images[index as usize];
        let color = vk::ImageAspectFlags::COLOR;
        transition(
            dev,
            cb,
            image,
            color,
            vk::ImageLayout::UNDEFINED,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        );
        let corner = |w: u32, h: u32| vk::Offset3D {
            x: w as i32,
            y: h as i32,
            z: 1,
        };
        let region = vk::ImageBlit::default()
            .src_subresource(layers(color))
            .src_offsets([vk::Offset3D::default(), corner(size, size)])
            .dst_subresource(layers(color))
            .dst_offsets([
                vk::Offset3D::default(),
                corner(self.extent.width, self.extent.height),
            ]);
        // SAFETY: `cb` is recording; both images are in the layouts named.
        unsafe {
            dev.device.cmd_blit_image(
                cb,
                src,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[region],
                vk::Filter::LINEAR,
            )
        };
        transition(
            dev,
            cb,
            image,
            color,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            vk::ImageLayout::PRESENT_SRC_KHR,
        );
    }

    pub fn present(&self, dev: &Device, index: u32) -> Result<()> {
        let waits = [self.rendered[index as usize]];
        let swapchains = [self.swapchain];
        let indices = [index];
        let info = vk::PresentInfoKHR::default()
            .wait_semaphores(&waits)
            .swapchains(&swapchains)
            .image_indices(&indices);
        check(
            // SAFETY: the image was acquired and its rendering submitted, signalling `waits`.
            unsafe { self.swapchain_fn.queue_present(dev.queue, &info) },
            "vkQueuePresentKHR",
        )?;
        Ok(())
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: the device is idle.
        unsafe {
            for s in self.rendered {
                dev.device.destroy_semaphore(s, None);
            }
            dev.device.destroy_semaphore(self.acquired, None);
            self.swapchain_fn.destroy_swapchain(self.swapchain, None);
            self.surface_fn.destroy_surface(self.surface, None);
        }
    }
}
