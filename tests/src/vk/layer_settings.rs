//! The settings the workload gives VK_LAYER_utrace through `VkLayerSettingsCreateInfoEXT`
//! (`--layer-setting KEY=VALUE`), chained to every instance it creates. `true`/`false`
//! values are passed as `VK_LAYER_SETTING_TYPE_BOOL32_EXT`, others as strings: both kinds
//! of value the layer must read.

use std::ffi::{c_void, CString};
use std::sync::OnceLock;

use ash::vk;

static SETTINGS: OnceLock<Vec<(String, String)>> = OnceLock::new();

/// Sets the process's settings (once, before the first instance).
pub fn set(settings: Vec<(String, String)>) {
    let _ = SETTINGS.set(settings);
}

/// The settings, owned in the form `VkLayerSettingEXT` points into.
pub struct Chained {
    names: Vec<CString>,
    strings: Vec<CString>,
    string_ptrs: Vec<*const std::ffi::c_char>,
    bools: Vec<vk::Bool32>,
    /// (name index, BOOL32 or STRING, value index)
    items: Vec<(usize, bool, usize)>,
}

impl Chained {
    /// The settings given with [`set`]; `None` when there are none.
    pub fn get() -> Option<Chained> {
        let settings = SETTINGS.get().filter(|s| !s.is_empty())?;
        let mut c = Chained {
            names: Vec::new(),
            strings: Vec::new(),
            string_ptrs: Vec::new(),
            bools: Vec::new(),
            items: Vec::new(),
        };
        for (key, value) in settings {
            c.names.push(CString::new(key.as_str()).ok()?);
            match value.as_str() {
                "true" | "false" => {
                    c.items.push((c.names.len() - 1, true, c.bools.len()));
                    c.bools.push(vk::Bool32::from(value == "true"));
                }
                _ => {
                    c.items.push((c.names.len() - 1, false, c.strings.len()));
                    c.strings.push(CString::new(value.as_str()).ok()?);
                }
            }
        }
        c.string_ptrs = c.strings.iter().map(|s| s.as_ptr()).collect();
        Some(c)
    }

    /// The `VkLayerSettingEXT`s, borrowing from `self`.
    pub fn settings(&self) -> Vec<vk::LayerSettingEXT<'_>> {
        self.items
            .iter()
            .map(|&(name, is_bool, at)| {
                let (ty, values) = if is_bool {
                    (
                        vk::LayerSettingTypeEXT::BOOL32,
                        (&self.bools[at] as *const vk::Bool32).cast::<c_void>(),
                    )
                } else {
                    (
                        vk::LayerSettingTypeEXT::STRING,
                        (&self.string_ptrs[at] as *const *const std::ffi::c_char).cast::<c_void>(),
                    )
                };
                vk::LayerSettingEXT {
                    p_layer_name: c"VK_LAYER_utrace".as_ptr(),
                    p_setting_name: self.names[name].as_ptr(),
                    ty,
                    value_count: 1,
                    p_values: values,
                    ..Default::default()
                }
            })
            .collect()
    }
}
