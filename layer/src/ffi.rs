//! Vulkan's C arrays as Rust slices.

/// A slice from a Vulkan (count, pointer) pair; empty for a zero count or a null pointer.
///
/// # Safety
/// When non-null, `ptr` must point to `count` valid elements that outlive the result.
pub unsafe fn slice<'a, T>(ptr: *const T, count: u32) -> &'a [T] {
    if ptr.is_null() || count == 0 {
        &[]
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { std::slice::from_raw_parts(ptr, count as usize) }
    }
}
