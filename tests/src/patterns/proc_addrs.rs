//! Which library implements the recording commands the application was handed: the layer
//! hands out its hook only for commands it traces, and the driver's own function where the
//! command's tracepoints are switched off (`GPU_TRACEPOINTS`). Prints one line,
//! `utrace-proc-addrs: vkCmdDraw=LIB ...`, LIB being the file name of the library that
//! holds the function `vkGetDeviceProcAddr` returned when the device was created.

use std::ffi::CStr;

use crate::vk::{Device, Result};

/// The file name of the shared object holding `f`.
fn library_of(f: *const ()) -> Result<String> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: `info` is a valid out-parameter; `f` is a function of a loaded library.
    if unsafe { libc::dladdr(f.cast(), &mut info) } == 0 || info.dli_fname.is_null() {
        return Err(format!("dladdr found no library for {f:?}"));
    }
    // SAFETY: dladdr returned a NUL-terminated path owned by the dynamic linker.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    Ok(path.rsplit('/').next().unwrap_or_default().to_string())
}

pub(super) fn proc_addrs(dev: &Device) -> Result<bool> {
    let fp = dev.device.fp_v1_0();
    let commands: [(&str, *const ()); 4] = [
        ("vkCmdDraw", fp.cmd_draw as *const ()),
        ("vkCmdDispatch", fp.cmd_dispatch as *const ()),
        ("vkCmdFillBuffer", fp.cmd_fill_buffer as *const ()),
        (
            "vkCmdBeginRenderPass",
            fp.cmd_begin_render_pass as *const (),
        ),
    ];
    let mut line = String::from("utrace-proc-addrs:");
    for (name, f) in commands {
        line.push_str(&format!(" {name}={}", library_of(f)?));
    }
    eprintln!("{line}");
    Ok(true)
}
