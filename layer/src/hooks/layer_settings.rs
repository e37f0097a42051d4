//! The application's `VkLayerSettingsCreateInfoEXT` (`VK_EXT_layer_settings`), chained to
//! its `VkInstanceCreateInfo`: the settings it gives `VK_LAYER_utrace`, as text, for
//! [`crate::config::settings`]. Several values of one setting are joined with commas (a
//! list, as the settings file writes one).

use std::ffi::{c_char, CStr};

use ash::vk;

use crate::config::settings::{Entries, Origin};

const LAYER_NAME: &CStr = c"VK_LAYER_utrace";

/// # Safety
/// `create_info` is the application's, its `pNext` chain valid (Vulkan's rules).
pub unsafe fn from_create_info(create_info: &vk::InstanceCreateInfo<'_>) -> Entries {
    let mut out = Entries::new();
    let mut next = create_info.p_next.cast::<vk::BaseInStructure<'_>>();
    // SAFETY: every structure of a valid chain starts with sType and pNext.
    while let Some(base) = unsafe { next.as_ref() } {
        if base.s_type == vk::StructureType::LAYER_SETTINGS_CREATE_INFO_EXT {
            // SAFETY: its sType says it is a VkLayerSettingsCreateInfoEXT.
            let info = unsafe { &*next.cast::<vk::LayerSettingsCreateInfoEXT<'_>>() };
            // SAFETY: the application passes `setting_count` settings.
            let settings = unsafe { crate::ffi::slice(info.p_settings, info.setting_count) };
            for s in settings {
                // SAFETY: a setting's names are NUL-terminated strings (or null).
                let (layer, name) = unsafe { (text(s.p_layer_name), text(s.p_setting_name)) };
                if layer.as_deref() != Some(LAYER_NAME.to_str().unwrap_or_default()) {
                    continue;
                }
                let Some(name) = name else { continue };
                // SAFETY: `p_values` holds `value_count` values of type `ty`.
                if let Some(value) = unsafe { values(s) } {
                    out.push((name, value, Origin::Application));
                }
            }
        }
        next = base.p_next;
    }
    out
}

/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn text(p: *const c_char) -> Option<String> {
    // SAFETY: forwarded from the caller.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `n` values of `T` at `p`, as text.
///
/// # Safety
/// `p` is null or holds `n` values of `T`.
unsafe fn listed<T: ToString>(p: *const std::ffi::c_void, n: u32) -> Vec<String> {
    // SAFETY: forwarded from the caller.
    unsafe { crate::ffi::slice(p.cast::<T>(), n) }
        .iter()
        .map(T::to_string)
        .collect()
}

/// A setting's values as text; `None` for a type utrace has no use for.
///
/// # Safety
/// `s.p_values` holds `s.value_count` values of type `s.ty`.
unsafe fn values(s: &vk::LayerSettingEXT<'_>) -> Option<String> {
    let (p, n) = (s.p_values, s.value_count);
    let list: Vec<String> =
        // SAFETY: `p` holds `n` values of the type `s.ty` names (the caller's word).
        unsafe {
        match s.ty {
            vk::LayerSettingTypeEXT::BOOL32 => listed::<vk::Bool32>(p, n)
                .into_iter()
                .map(|b| (b != "0").to_string())
                .collect(),
            vk::LayerSettingTypeEXT::INT32 => listed::<i32>(p, n),
            vk::LayerSettingTypeEXT::UINT32 => listed::<u32>(p, n),
            vk::LayerSettingTypeEXT::INT64 => listed::<i64>(p, n),
            vk::LayerSettingTypeEXT::UINT64 => listed::<u64>(p, n),
            vk::LayerSettingTypeEXT::STRING => crate::ffi::slice(p.cast::<*const c_char>(), n)
                .iter()
                .filter_map(|&v| text(v))
                .collect(),
            _ => return None,
        }
    };
    Some(list.join(","))
}
