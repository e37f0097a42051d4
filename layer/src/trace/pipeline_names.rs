//! The names the application gave its pipelines (`vkSetDebugUtilsObjectNameEXT`), as the
//! traceq thread knows them when it writes a batch: every format follows a draw's or
//! dispatch's `pipeline` handle with its name. Read from the device's list of object names
//! (see `output::ObjectNames`) on the traceq thread, never on an application's call.

use std::collections::HashMap;

use ash::vk;

use super::output::ObjectNames;

#[derive(Debug)]
pub struct PipelineNames {
    source: ObjectNames,
    /// How many of `source`'s names have been looked at.
    read: usize,
    names: HashMap<u64, String>,
}

impl PipelineNames {
    pub fn new(source: ObjectNames) -> PipelineNames {
        PipelineNames {
            source,
            read: 0,
            names: HashMap::new(),
        }
    }

    /// Takes in the names given since the last call (once per batch: one uncontended lock,
    /// usually nothing new). A later name replaces an earlier one; an empty name removes it,
    /// as Vulkan says.
    pub fn refresh(&mut self) {
        let list = self.source.lock();
        for n in list.get(self.read..).unwrap_or_default() {
            if n.object_type != vk::ObjectType::PIPELINE.as_raw() {
                continue;
            }
            if n.name.is_empty() {
                self.names.remove(&n.object);
            } else {
                self.names.insert(n.object, n.name.clone());
            }
        }
        self.read = list.len();
    }

    /// Names given by hand (the formats' tests).
    #[cfg(test)]
    pub fn of(names: &[(u64, &str)]) -> PipelineNames {
        let source = ObjectNames::default();
        source.lock().extend(
            names
                .iter()
                .map(|&(object, name)| super::output::ObjectName {
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
    use crate::trace::output::ObjectName;

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
}
