//! The names the application gives a device's objects (`vkSetDebugUtilsObjectNameEXT`), kept
//! in the order given: the hook appends, the outputs that show names read (pipelines' names
//! in every format, every name in Perfetto). The layer announces its shader sets here too
//! (see `shader_sets`).

use std::sync::Arc;

use parking_lot::Mutex;

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
