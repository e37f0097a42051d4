//! The names the application gives a device's objects (`vkSetDebugUtilsObjectNameEXT`), kept
//! in the order given: the hook appends, the outputs that show names read (pipelines' names
//! in every format, every name in Perfetto). The layer announces its shader sets here too
//! (see `shader_sets`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::gpu::interface::cpu_clock;

/// A name the application gave an object (`vkSetDebugUtilsObjectNameEXT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectName {
    /// When it was named (`CLOCK_BOOTTIME`): before any work that uses the object, so a
    /// trace processor knows the name when it meets the object's stages.
    pub named_at_ns: u64,
    pub device: u64,
    pub object_type: i32,
    pub object: u64,
    pub name: String,
}

/// The names the application gave a device's objects, in the order given: the hook appends,
/// formats that show names read (Perfetto re-sends them to every new sequence).
pub type ObjectNames = Arc<Mutex<Vec<ObjectName>>>;

/// Object names kept for Perfetto sessions that start later; beyond it new names are not kept.
const MAX_NAMES: usize = 1 << 16;

/// A device's names as its tracer keeps them: which it keeps, up to [`MAX_NAMES`].
pub struct KeptNames {
    /// Its outputs show the names of every kind of object (Perfetto), not only pipelines'.
    shown: bool,
    /// Names the application gave objects (kept for Perfetto), and whether some were not.
    names: ObjectNames,
    full: AtomicBool,
}

impl KeptNames {
    pub fn new(names: ObjectNames, shown: bool) -> KeptNames {
        KeptNames {
            shown,
            names,
            full: AtomicBool::new(false),
        }
    }

    /// The application named an object of device number `index`: formats that show names
    /// get it in order with the batches (Perfetto shows stages under the names of their
    /// command buffers and passes).
    pub fn named(&self, index: u32, device: u64, object_type: i32, object: u64, name: &str) {
        // Every format shows the names of pipelines and shader objects (after a draw's or
        // dispatch's handle); the others only Perfetto.
        let attributed = [
            ash::vk::ObjectType::PIPELINE,
            ash::vk::ObjectType::SHADER_EXT,
        ]
        .map(|t| t.as_raw())
        .contains(&object_type);
        if !self.shown && !attributed {
            return;
        }
        let mut names = self.names.lock();
        if names.len() >= MAX_NAMES {
            if !self.full.swap(true, Ordering::Relaxed) {
                log::warn!(
                    "device {index}: more than {MAX_NAMES} object names; later ones are not kept"
                );
            }
            return;
        }
        names.push(ObjectName {
            named_at_ns: cpu_clock::boottime_ns(),
            device,
            object_type,
            object,
            name: name.to_string(),
        });
    }
}
