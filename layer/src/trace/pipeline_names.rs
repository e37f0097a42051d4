//! The names the application gave its pipelines and shader objects
//! (`vkSetDebugUtilsObjectNameEXT`), as the traceq thread knows them when it writes a batch:
//! every format follows a draw's, dispatch's or ray trace's `pipeline` handle with its name.
//! A set of shader objects (see `shader_sets`) is named after its shaders, `vs + fs` (a
//! shader without a name by its handle). Read from the device's list of object names (see
//! `object_names`) on the traceq thread, never on an application's call.

use std::collections::HashMap;

use ash::vk;

use super::object_names::ObjectNames;
use super::shader_sets::SHADER_SET_OBJECT_TYPE;

#[derive(Debug)]
pub struct PipelineNames {
    source: ObjectNames,
    /// How many of `source`'s names have been looked at.
    read: usize,
    names: HashMap<u64, String>,
    /// Shader sets: their id and their shaders' handles.
    sets: Vec<(u64, Vec<u64>)>,
}

impl PipelineNames {
    pub fn new(source: ObjectNames) -> PipelineNames {
        PipelineNames {
            source,
            read: 0,
            names: HashMap::new(),
            sets: Vec::new(),
        }
    }

    /// Takes in the names given since the last call (once per batch: one uncontended lock,
    /// usually nothing new). A later name replaces an earlier one; an empty name removes it,
    /// as Vulkan says.
    pub fn refresh(&mut self) {
        let list = self.source.lock();
        let new = list.get(self.read..).unwrap_or_default();
        let named = [vk::ObjectType::PIPELINE, vk::ObjectType::SHADER_EXT].map(|t| t.as_raw());
        let mut changed = false;
        for n in new {
            if n.object_type == SHADER_SET_OBJECT_TYPE {
                let members = n
                    .name
                    .split(',')
                    .filter_map(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).ok())
                    .collect();
                self.sets.push((n.object, members));
                changed = true;
                continue;
            }
            if !named.contains(&n.object_type) {
                continue;
            }
            changed = true;
            if n.name.is_empty() {
                self.names.remove(&n.object);
            } else {
                self.names.insert(n.object, n.name.clone());
            }
        }
        self.read = list.len();
        drop(list);
        if changed {
            self.name_sets();
        }
    }

    /// Names every shader set after its shaders' current names.
    fn name_sets(&mut self) {
        for (id, members) in &self.sets {
            let parts: Vec<String> = members
                .iter()
                .map(|m| match self.names.get(m) {
                    Some(name) => name.clone(),
                    None => format!("{m:#x}"),
                })
                .collect();
            self.names.insert(*id, parts.join(" + "));
        }
    }

    /// Names given by hand (the formats' tests).
    #[cfg(test)]
    pub fn of(names: &[(u64, &str)]) -> PipelineNames {
        let source = ObjectNames::default();
        source.lock().extend(
            names
                .iter()
                .map(|&(object, name)| super::object_names::ObjectName {
                    named_at_ns: 0,
                    device: 1,
                    object_type: vk::ObjectType::PIPELINE.as_raw(),
                    object,
                    name: name.into(),
                }),
        );
        let mut names = PipelineNames::new(source);
        names.refresh();
        names
    }

    /// The name of pipeline `handle`, if the application gave it one.
    pub fn get(&self, handle: u64) -> Option<&str> {
        if handle == 0 {
            return None;
        }
        self.names.get(&handle).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::object_names::ObjectName;

    fn named(object_type: vk::ObjectType, object: u64, name: &str) -> ObjectName {
        ObjectName {
            named_at_ns: 0,
            device: 1,
            object_type: object_type.as_raw(),
            object,
            name: name.into(),
        }
    }

    #[test]
    fn pipelines_keep_their_latest_name() {
        let source = ObjectNames::default();
        let mut names = PipelineNames::new(source.clone());
        source.lock().extend([
            named(vk::ObjectType::PIPELINE, 7, "shadow"),
            named(vk::ObjectType::BUFFER, 8, "not a pipeline"),
        ]);
        names.refresh();
        assert_eq!(names.get(7), Some("shadow"));
        assert_eq!(names.get(8), None);
        assert_eq!(names.get(0), None);
        source.lock().extend([
            named(vk::ObjectType::PIPELINE, 7, "shadow v2"),
            named(vk::ObjectType::PIPELINE, 9, "blur"),
        ]);
        names.refresh();
        assert_eq!(
            (names.get(7), names.get(9)),
            (Some("shadow v2"), Some("blur"))
        );
        source.lock().push(named(vk::ObjectType::PIPELINE, 9, ""));
        names.refresh();
        assert_eq!(names.get(9), None, "an empty name removes it");
    }

    #[test]
    fn shader_sets_are_named_after_their_shaders() {
        let source = ObjectNames::default();
        let mut names = PipelineNames::new(source.clone());
        let set = |id: u64, members: &str| ObjectName {
            named_at_ns: 0,
            device: 0,
            object_type: SHADER_SET_OBJECT_TYPE,
            object: id,
            name: members.into(),
        };
        source.lock().extend([
            named(vk::ObjectType::SHADER_EXT, 0x70, "triangle vs"),
            set(0xffff_0001, "0x70,0x80"),
        ]);
        names.refresh();
        assert_eq!(names.get(0xffff_0001), Some("triangle vs + 0x80"));
        assert_eq!(names.get(0x70), Some("triangle vs"));
        // A name given later names the set too.
        source
            .lock()
            .push(named(vk::ObjectType::SHADER_EXT, 0x80, "triangle fs"));
        names.refresh();
        assert_eq!(names.get(0xffff_0001), Some("triangle vs + triangle fs"));
    }
}
