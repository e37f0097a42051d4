//! The application's own labels and markers: debug utils labels nested and spanning
//! submissions, and the same with VK_EXT_debug_marker where the device has it.

use ash::vk;

use super::graphics::full_barrier;
use super::{free, record_once, report, used, WORDS};
use crate::submitter::Submitter;
use crate::vk::{verify_fill, Buffer, Device, FillPipeline, Instance, Result};

/// Labels nested three deep with a marker, a 1000-character label, a label that is not
/// UTF-8, and a label opened in one command buffer and closed in the next submission's; the
/// same with VK_EXT_debug_marker.
pub fn labels(
    inst: &Instance,
    dev: &Device,
    sub: &mut Submitter,
    features: &mut Vec<String>,
) -> Result<bool> {
    let d = &dev.device;
    let has_markers = dev.has_extension(ash::ext::debug_marker::NAME);
    let utils = ash::ext::debug_utils::Device::new(&inst.instance, d);
    let markers = ash::ext::debug_marker::Device::new(&inst.instance, d);
    let data = Buffer::new(
        dev,
        u64::from(WORDS) * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
    )?;
    let fill = FillPipeline::new(dev, &data)?;
    let long = std::ffi::CString::new("x".repeat(1000)).map_err(|e| e.to_string())?;
    fn label(name: &std::ffi::CStr) -> vk::DebugUtilsLabelEXT<'_> {
        vk::DebugUtilsLabelEXT::default().label_name(name)
    }
    let not_utf8: &std::ffi::CStr = c"bad \xff\xfe label";
    let cb = record_once(dev, |cb| {
        // SAFETY: `cb` is recording; labels are balanced within it. VK_EXT_debug_marker is
        // deprecated in favour of debug utils, but applications still use it.
        #[allow(deprecated)]
        unsafe {
            utils.cmd_begin_debug_utils_label(cb, &label(c"frame"));
            utils.cmd_begin_debug_utils_label(cb, &label(c"shadow pass"));
            utils.cmd_begin_debug_utils_label(cb, &label(c"cascade 0"));
            fill.record(dev, cb, 1, WORDS);
            utils.cmd_end_debug_utils_label(cb);
            utils.cmd_insert_debug_utils_label(cb, &label(c"marker: after cascade"));
            utils.cmd_end_debug_utils_label(cb);
            utils.cmd_end_debug_utils_label(cb);
            full_barrier(dev, cb);
            utils.cmd_begin_debug_utils_label(cb, &label(&long));
            fill.record(dev, cb, 2, WORDS);
            utils.cmd_end_debug_utils_label(cb);
            full_barrier(dev, cb);
            utils.cmd_begin_debug_utils_label(cb, &label(not_utf8));
            d.cmd_fill_buffer(cb, data.buffer, 0, 64, 0);
            utils.cmd_end_debug_utils_label(cb);
            if has_markers {
                let marker = vk::DebugMarkerMarkerInfoEXT::default().marker_name(c"debug marker");
                markers.cmd_debug_marker_begin(cb, &marker);
                markers.cmd_debug_marker_insert(
                    cb,
                    &vk::DebugMarkerMarkerInfoEXT::default().marker_name(c"inserted marker"),
                );
                markers.cmd_debug_marker_end(cb);
            }
        }
        Ok(())
    })?;
    sub.submit("labels", &[cb], None)?;
    if has_markers {
        used(features, "debug_marker");
    }
    // A label that spans two submissions on the queue.
    let opens = record_once(dev, |cb| {
        // SAFETY: `cb` is recording; the label is closed by the next submission.
        unsafe {
            utils.cmd_begin_debug_utils_label(cb, &label(c"spans command buffers"));
            fill.record(dev, cb, 3, WORDS);
        }
        Ok(())
    })?;
    let closes = record_once(dev, |cb| {
        // SAFETY: closes the label the previous submission left open on this queue.
        unsafe {
            fill.record(dev, cb, 4, WORDS);
            utils.cmd_end_debug_utils_label(cb);
        }
        Ok(())
    })?;
    sub.submit("label-opens", &[opens], None)?;
    sub.submit("label-closes", &[closes], None)?;
    let ok = report(verify_fill(&data, 4, WORDS));
    free(dev, &[cb, opens, closes]);
    fill.destroy(dev);
    data.destroy(dev);
    Ok(ok)
}
