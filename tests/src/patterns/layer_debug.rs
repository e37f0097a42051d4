//! The debug counters a debug build of the layer exports (`layer/src/alloc_count.rs`),
//! reached from the application's side: the allocations on the calling thread, and the
//! batches the traceq threads have released, which lets a scenario wait for the layer to
//! catch up instead of guessing how long that takes.

use crate::vk::Result;

pub type Counter = unsafe extern "C" fn() -> u64;

/// A debug counter of the layer loaded in this process (`utrace_debug_...`), found by the
/// layer's path in the process's mappings (the loader opens layers with local symbols).
pub fn layer_counter(name: &std::ffi::CStr) -> Result<Counter> {
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| e.to_string())?;
    let path = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.ends_with("/libVkLayer_utrace.so"))
        .ok_or("the utrace layer is not loaded in this process")?;
    let path = std::ffi::CString::new(path).map_err(|e| e.to_string())?;
    // SAFETY: a NUL-terminated path; RTLD_NOLOAD only returns a library already loaded.
    let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if lib.is_null() {
        return Err("dlopen of the loaded layer failed".into());
    }
    // SAFETY: a live handle and a NUL-terminated name.
    let sym = unsafe { libc::dlsym(lib, name.as_ptr()) };
    if sym.is_null() {
        return Err(format!("the layer has no {name:?} (a release build?)"));
    }
    // SAFETY: the symbol is one of the layer's `extern "C" fn() -> u64`.
    Ok(unsafe { std::mem::transmute::<*mut libc::c_void, Counter>(sym) })
}

/// The layer's count of batches its traceq threads released.
pub fn batches_released() -> Result<Counter> {
    layer_counter(c"utrace_debug_batches_released")
}

/// Waits (at most 60 s: far beyond what the layer needs to catch up, on any machine) until
/// `released` says `batches` batches were released in all.
pub fn wait_released(released: Counter, batches: u64) -> Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        // SAFETY: the layer's function, callable from any thread.
        let now = unsafe { released() };
        if now >= batches {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "the layer released {now} batches after 60 s, not {batches}"
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
