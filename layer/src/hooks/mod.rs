//! The entry points the layer intercepts, grouped by the object they act on. Each hook does
//! its own work inside [`guarded`] and calls down outside it, so a fault in the layer never
//! keeps a call from reaching the driver and no panic crosses the FFI boundary.

/// The device record of a dispatchable handle, or `return $otherwise` from the hook. A
/// handle the layer never saw cannot normally reach a hook (the loader only installs hooks
/// for devices created through this layer); if one does, the hook gives up quietly rather
/// than panic across the FFI boundary.
// Defined before the submodules so that they see it (macro_rules scope is textual).
macro_rules! device_or {
    ($handle:expr) => {
        device_or!($handle, ())
    };
    ($handle:expr, $otherwise:expr) => {
        // SAFETY: the application passes a live dispatchable object of this chain.
        match unsafe { crate::hooks::device_record::device_of($handle) } {
            Some(dev) => dev,
            None => return $otherwise,
        }
    };
}

pub mod command_buffer;
pub mod commands;
pub mod common_next;
pub mod device;
mod device_outputs;
pub mod device_record;
pub mod instance;
pub mod layer_settings;
pub mod objects;
pub mod queue;

pub use crate::guard::guarded;

pub use crate::ffi::slice;

use std::ffi::CStr;

use ash::vk;

macro_rules! hook {
    ($f:path) => {
        // SAFETY: every hook has the exact signature of the command it is registered for;
        // the loader casts the pointer back to that signature.
        Some(unsafe {
            std::mem::transmute::<*const (), unsafe extern "system" fn()>($f as *const ())
        })
    };
}

/// The hook of a command whose tracepoints all hang on one `GPU_TRACEPOINTS` switch (the
/// `SWITCH` of the module `bracketed!` gives it), unless that switch is off: then the
/// application calls the next layer directly and pays nothing for the layer. The switches
/// are set from the environment before any device exists and never change.
macro_rules! switched {
    ($($seg:ident)::+) => {
        match $($seg)::+::SWITCH {
            Some(switch) if !crate::trace::tracepoints::TOGGLES[switch].is_enabled() => None,
            _ => hook!($($seg)::+),
        }
    };
}

/// Device functions intercepted while tracing is configured.
pub fn device_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
    device_object_hook(name)
        .or_else(|| command_hook(name))
        .or_else(|| bracketed_hook(name))
}

/// The bracketed recording commands (see `commands::bracketed`): each one's hook (unless its
/// switch is off), and what every device's next functions make of their idle path
/// ([`common_next`]).
macro_rules! bracketed_table {
    ($($($name:literal)|+ => $($seg:ident)::+,)*) => {
        fn bracketed_hook(name: &CStr) -> vk::PFN_vkVoidFunction {
            match name.to_bytes() {
                $($($name)|+ => switched!($($seg)::+),)*
                _ => None,
            }
        }

        /// Takes a new device's next functions into account, before the application has
        /// the device.
        pub fn adopt_common_next(d: &crate::loader::dispatch::DeviceDispatch) {
            $($($seg)::+::adopt(d);)*
        }

        /// Makes every idle hook look its function up.
        pub fn forget_common_next() {
            $($($seg)::+::COMMON_NEXT.forget();)*
        }
    };
}

// The name-to-hook tables: every alias of every command listed in `intercepts.txt`, from
// the Vulkan registry (see the build script).
include!(concat!(env!("OUT_DIR"), "/intercepts.rs"));

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    /// The hook a name resolves to, in whichever table holds it.
    fn any_hook(name: &str) -> vk::PFN_vkVoidFunction {
        let name = CString::new(name).unwrap();
        instance_hook(&name)
            .or_else(|| device_lifetime_hook(&name))
            .or_else(|| device_hook(&name))
    }

    #[test]
    fn only_intercepted_names_resolve() {
        // vkCreateInstance and vkCreateDevice are the entry's (`crate::entry::creation`).
        assert!(instance_hook(c"vkCreateInstance").is_none());
        assert!(instance_hook(c"vkCreateDevice").is_none());
        assert!(instance_hook(c"vkDestroyInstance").is_some());
        assert!(device_hook(c"vkQueueSubmit2KHR").is_some());
        assert!(device_hook(c"vkCmdDraw").is_some());
        assert!(device_hook(c"vkCmdDrawIndirectCountAMD").is_some());
        assert!(device_hook(c"vkCmdSetViewport").is_none());
        // Sparse binding is not work the layer times: it passes through untouched.
        assert!(device_hook(c"vkQueueBindSparse").is_none());
        assert!(device_lifetime_hook(c"vkDestroyDevice").is_some());
    }

    /// Every name of every intercepted command (its aliases from the registry included)
    /// resolves to the one hook of that command; every other command of the registry
    /// resolves to none, so that `vkGet*ProcAddr` gives the next layer's function.
    #[test]
    fn every_alias_resolves_to_its_hook_and_nothing_else_is_hooked() {
        use crate::loader::command_aliases::COMMANDS;
        let intercepted: std::collections::HashSet<&str> =
            INTERCEPTED.iter().map(|(name, _)| *name).collect();
        // Tracepoints off by default (`GPU_TRACEPOINTS`): their commands are not hooked.
        // (vkCmdBeginQuery and vkCmdEndQuery are, whatever the switch says: GPU counters
        // must see the application's own statistics queries.)
        let off_by_default = [
            "vkCmdPipelineBarrier",
            "vkCmdPipelineBarrier2",
            "vkCmdResetQueryPool",
            "vkCmdCopyQueryPoolResults",
            "vkCmdWriteTimestamp",
            "vkCmdWriteTimestamp2",
        ];
        for (name, canonical) in INTERCEPTED {
            let hook = any_hook(name).map(|f| f as usize);
            assert_eq!(
                hook.is_some(),
                !off_by_default.contains(canonical),
                "{name}'s hook"
            );
            assert_eq!(hook, any_hook(canonical).map(|f| f as usize), "{name}");
        }
        // The registry's aliases all made it into the table.
        for (name, canonical) in COMMANDS {
            if intercepted.contains(canonical) {
                assert!(
                    intercepted.contains(name),
                    "{name}, an alias of {canonical}"
                );
            } else {
                assert!(any_hook(name).is_none(), "{name} is hooked but not listed");
            }
        }
        // New commands are there with their aliases (KHR names of promoted commands).
        for name in [
            "vkCmdTraceRaysKHR",
            "vkCmdBuildAccelerationStructuresKHR",
            "vkCmdExecuteGeneratedCommandsEXT",
            "vkCmdBindShadersEXT",
            "vkCmdBeginConditionalRenderingEXT",
            "vkCmdPipelineBarrier2KHR",
            "vkCmdBeginRenderingKHR",
        ] {
            assert!(intercepted.contains(name), "{name}");
        }
        assert!(COMMANDS.len() > 500);
    }
}
