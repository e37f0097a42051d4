//! Draws recorded with shader objects (`vkCmdBindShadersEXT`) have no pipeline: what ran is
//! the set of shaders bound to the graphics stages. Each distinct set gets an id of the
//! device's, which the draw records where it would record a pipeline; the traceq thread names
//! it after its shaders ("triangle vs + triangle fs", see `pipeline_names`). A set of one
//! shader (a compute shader, say) is that shader's own handle, named by its own name.
//!
//! The map from sets to ids is read on `vkCmdBindShadersEXT` only (not on draws), and a
//! recording asks it only when the set it binds differs from its last one; it is written once
//! per new set. The set is announced through the device's object names, in order with the
//! names the application gives, so the traceq thread learns of it before any batch using it.

use std::collections::HashMap;

use parking_lot::RwLock;

use super::object_names::{ObjectName, ObjectNames};

/// The graphics stages a shader set is made of, in pipeline order.
pub const GRAPHICS_STAGES: usize = 7;

/// Ids of sets of several shaders: far from the handles drivers give on 64-bit machines
/// (pointers, or small counters), and printed as `0xffff5e7000000001`, ...
pub const SET_ID_BASE: u64 = 0xffff_5e70_0000_0000;

/// The object type of the layer's own entries in the device's object names: the object is a
/// set's id and the name its shaders' handles, `0x..,0x..` in pipeline order. Not a Vulkan
/// object type (those are non-negative), so no output shows it as one.
pub const SHADER_SET_OBJECT_TYPE: i32 = -0x5e7;

/// Most sets a device numbers; a later new set is recorded without a name (id 0).
const MAX_SETS: usize = 1 << 12;

pub struct ShaderSets {
    ids: RwLock<HashMap<[u64; GRAPHICS_STAGES], u64>>,
    names: ObjectNames,
}

impl ShaderSets {
    pub fn new(names: ObjectNames) -> ShaderSets {
        ShaderSets {
            ids: RwLock::new(HashMap::new()),
            names,
        }
    }

    /// The id of the set of `stages` (0: nothing bound; one shader: its handle).
    pub fn id(&self, stages: &[u64; GRAPHICS_STAGES]) -> u64 {
        let mut bound = stages.iter().filter(|&&s| s != 0);
        match (bound.next(), bound.next()) {
            (None, _) => return 0,
            (Some(&only), None) => return only,
            _ => {}
        }
        if let Some(&id) = self.ids.read().get(stages) {
            return id;
        }
        let mut ids = self.ids.write();
        let next = SET_ID_BASE + ids.len() as u64 + 1;
        if ids.len() >= MAX_SETS {
            return ids.get(stages).copied().unwrap_or(0);
        }
        let id = *ids.entry(*stages).or_insert(next);
        if id == next {
            let members: Vec<String> = stages
                .iter()
                .filter(|&&s| s != 0)
                .map(|s| format!("{s:#x}"))
                .collect();
            self.names.lock().push(ObjectName {
                named_at_ns: crate::gpu::interface::cpu_clock::boottime_ns(),
                device: 0,
                object_type: SHADER_SET_OBJECT_TYPE,
                object: id,
                name: members.join(","),
            });
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_are_numbered_once_and_announced() {
        let names = ObjectNames::default();
        let sets = ShaderSets::new(names.clone());
        assert_eq!(sets.id(&[0; GRAPHICS_STAGES]), 0);
        assert_eq!(sets.id(&[0, 0, 0x70, 0, 0, 0, 0]), 0x70);
        let vs_fs = [0, 0, 0x70, 0, 0, 0, 0x80];
        let a = sets.id(&vs_fs);
        assert_eq!(a, SET_ID_BASE + 1);
        assert_eq!(sets.id(&vs_fs), a);
        let b = sets.id(&[0, 0x90, 0, 0, 0, 0, 0x80]);
        assert_eq!(b, SET_ID_BASE + 2);
        let list = names.lock();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].object_type, SHADER_SET_OBJECT_TYPE);
        assert_eq!((list[0].object, list[0].name.as_str()), (a, "0x70,0x80"));
        assert_eq!((list[1].object, list[1].name.as_str()), (b, "0x90,0x80"));
    }
}
