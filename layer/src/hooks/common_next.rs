//! An idle `vkCmd*` hook's way down without looking anything up.
//!
//! A hook finds the next layer's function through its command buffer's device (a read of
//! the loader's dispatch key, the registry's slot, the device record, its tracer): a chain
//! of dependent loads that cost a loaded, idle layer ~10% of a 30 ns `vkCmdDraw` on Lavapipe,
//! where a bare forwarding function costs ~1% (measured in one process, A/B). Devices of
//! one driver (or of one layer stack beneath) all have the same next function, so each hook
//! keeps it in a static of its own, [`CommonNext`], set as devices are created: while no
//! command buffer anywhere in the process is recorded with tracepoints
//! ([`crate::trace::record::cmdbufs::nothing_recording`]), the hook makes two independent loads and
//! calls down.

use std::sync::atomic::{AtomicPtr, Ordering};

/// No device has the command yet.
const UNSET: *mut () = std::ptr::null_mut();
/// Devices have different next functions: hooks look theirs up.
const DIFFERENT: *mut () = std::ptr::without_provenance_mut(1);

/// The next layer's function that every device created so far has for one command.
pub struct CommonNext(AtomicPtr<()>);

impl CommonNext {
    pub const fn new() -> CommonNext {
        CommonNext(AtomicPtr::new(UNSET))
    }

    /// The common function, if there is one.
    ///
    /// Relaxed: [`CommonNext::adopt`] ran inside `vkCreateDevice`, before the application
    /// had the device, so before any call with one of its command buffers.
    #[inline(always)]
    pub fn get(&self) -> Option<*mut ()> {
        let f = self.0.load(Ordering::Relaxed);
        (f != UNSET && f != DIFFERENT).then_some(f)
    }

    /// Takes a new device's next function into account (`None`: the device does not have
    /// the command, so the hook is never called for it). Once two devices differ, the
    /// hooks look their function up for good: a device that went away may come back with a
    /// driver loaded elsewhere, and a device's calls never wait for this to be undone.
    pub fn adopt(&self, next: Option<*mut ()>) {
        let Some(next) = next else {
            return;
        };
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| match now {
                UNSET => Some(next),
                same if same == next => None,
                _ => Some(DIFFERENT),
            });
    }

    /// Makes the hook look its function up (a device was created whose functions could not
    /// be taken into account).
    pub fn forget(&self) {
        self.0.store(DIFFERENT, Ordering::Relaxed);
    }
}

impl Default for CommonNext {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(n: usize) -> Option<*mut ()> {
        Some(n as *mut ())
    }

    #[test]
    fn one_function_for_all_devices_is_kept_until_a_device_differs() {
        let common = CommonNext::new();
        assert_eq!(common.get(), None, "no device yet");
        common.adopt(f(0x1000));
        common.adopt(None);
        common.adopt(f(0x1000));
        assert_eq!(common.get(), f(0x1000));
        common.adopt(f(0x2000));
        assert_eq!(common.get(), None, "two drivers: looked up");
        common.adopt(f(0x1000));
        assert_eq!(common.get(), None, "for good");
    }

    #[test]
    fn forgetting_makes_every_call_look_up() {
        let common = CommonNext::new();
        common.adopt(f(0x1000));
        common.forget();
        assert_eq!(common.get(), None);
    }
}
