use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::{Arc, Mutex};

use ash::vk;

use super::{check, Result, VALIDATION_LAYER};

pub struct Instance {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// Validation messages (warnings and errors), when validation is enabled.
    pub messages: Arc<Mutex<Vec<String>>>,
    /// Whether VK_LAYER_KHRONOS_validation is enabled.
    pub validation: bool,
    /// Leaked on purpose: the messenger's user data must outlive the instance.
    _user_data: *mut Arc<Mutex<Vec<String>>>,
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the loader passes valid callback data; `user` is the Arc leaked in `new`.
    unsafe {
        let messages = &*(user as *const Arc<Mutex<Vec<String>>>);
        let text = if (*data).p_message.is_null() {
            String::from("(no message)")
        } else {
            CStr::from_ptr((*data).p_message)
                .to_string_lossy()
                .into_owned()
        };
        if let Ok(mut m) = messages.lock() {
            m.push(format!("{severity:?}: {text}"));
        }
    }
    vk::FALSE
}

/// Whether the driver or one of `layers` offers instance extension `name`.
fn offers(entry: &ash::Entry, layers: &[CString], name: &CStr) -> bool {
    let has = |layer: Option<&CStr>| {
        // SAFETY: a valid (optional) layer name.
        unsafe { entry.enumerate_instance_extension_properties(layer) }
            .unwrap_or_default()
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(name))
    };
    has(None) || layers.iter().any(|l| has(Some(l.as_c_str())))
}

impl Instance {
    /// An instance with `layers` enabled in that order (the first is closest to the
    /// application) and `extensions`. Validation gets a messenger collecting its messages.
    pub fn new(layers: &[String], extensions: &[&CStr]) -> Result<Instance> {
        // SAFETY: loads the system's libvulkan.so.1.
        let entry =
            unsafe { ash::Entry::load() }.map_err(|e| format!("cannot load Vulkan: {e}"))?;
        let validation = layers.iter().any(|l| l == VALIDATION_LAYER);
        let layer_names: Vec<CString> = layers
            .iter()
            .map(|l| CString::new(l.as_str()).map_err(|e| e.to_string()))
            .collect::<Result<_>>()?;
        let layer_ptrs: Vec<*const c_char> = layer_names.iter().map(|l| l.as_ptr()).collect();
        let mut ext_ptrs: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
        if validation && !extensions.contains(&ash::ext::debug_utils::NAME) {
            ext_ptrs.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        // The application's settings for VK_LAYER_utrace (`--layer-setting`), with the
        // extension enabled where a layer or the driver offers it.
        let chained = super::layer_settings::Chained::get();
        let layer_settings = chained.as_ref().map(|c| c.settings()).unwrap_or_default();
        if chained.is_some() && offers(&entry, &layer_names, ash::ext::layer_settings::NAME) {
            ext_ptrs.push(ash::ext::layer_settings::NAME.as_ptr());
        }
        let messages = Arc::new(Mutex::new(Vec::new()));
        let user_data = Box::into_raw(Box::new(Arc::clone(&messages)));
        let mut messenger_info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                    | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(on_message))
            .user_data(user_data as *mut c_void);
        let app = vk::ApplicationInfo::default()
            .application_name(c"utrace-workload")
            .api_version(vk::API_VERSION_1_3);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layer_ptrs)
            .enabled_extension_names(&ext_ptrs);
        if validation {
            info = info.push_next(&mut messenger_info);
        }
        let mut settings_info = vk::LayerSettingsCreateInfoEXT::default().settings(&layer_settings);
        if chained.is_some() {
            info = info.push_next(&mut settings_info);
        }
        // SAFETY: valid create info; every pointer outlives the call.
        let mut created = unsafe { entry.create_instance(&info, None) };
        if matches!(created, Err(vk::Result::ERROR_EXTENSION_NOT_PRESENT))
            && ext_ptrs.last() == Some(&ash::ext::layer_settings::NAME.as_ptr())
        {
            // A loader older than the extension (Debian 12's 1.3.239) refuses every
            // extension it does not know, even one a layer offers: the settings go chained
            // without it, which the layers that read them accept.
            eprintln!("utrace-workload: the loader refuses VK_EXT_layer_settings; chaining the settings without it");
            let without = &ext_ptrs[..ext_ptrs.len() - 1];
            info = info.enabled_extension_names(without);
            // SAFETY: as above.
            created = unsafe { entry.create_instance(&info, None) };
        }
        let instance = check(created, "vkCreateInstance")?;
        let debug = if validation {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &instance);
            // SAFETY: valid create info on a live instance with the extension enabled.
            let messenger = check(
                unsafe { loader.create_debug_utils_messenger(&messenger_info, None) },
                "vkCreateDebugUtilsMessengerEXT",
            )?;
            Some((loader, messenger))
        } else {
            None
        };
        Ok(Instance {
            entry,
            instance,
            debug,
            messages,
            validation,
            _user_data: user_data,
        })
    }

    /// Of `wanted`, the device extensions the first device supports, or the validation
    /// layer provides when it is enabled (it implements VK_EXT_debug_marker itself).
    pub fn supported_device_extensions<'a>(&self, wanted: &[&'a CStr]) -> Result<Vec<&'a CStr>> {
        let physical = self.physical_device()?;
        // SAFETY: a live physical device.
        let mut props = check(
            unsafe {
                self.instance
                    .enumerate_device_extension_properties(physical)
            },
            "vkEnumerateDeviceExtensionProperties",
        )?;
        if self.validation {
            let mut count = 0;
            let f = self
                .instance
                .fp_v1_0()
                .enumerate_device_extension_properties;
            let layer = c"VK_LAYER_KHRONOS_validation";
            // SAFETY: the two-call idiom on a live physical device with an enabled layer.
            unsafe {
                if f(physical, layer.as_ptr(), &mut count, std::ptr::null_mut())
                    == vk::Result::SUCCESS
                {
                    let mut more = vec![vk::ExtensionProperties::default(); count as usize];
                    if f(physical, layer.as_ptr(), &mut count, more.as_mut_ptr())
                        == vk::Result::SUCCESS
                    {
                        more.truncate(count as usize);
                        props.extend(more);
                    }
                }
            }
        }
        Ok(wanted
            .iter()
            .copied()
            .filter(|w| props.iter().any(|p| p.extension_name_as_c_str() == Ok(*w)))
            .collect())
    }

    pub fn physical_device(&self) -> Result<vk::PhysicalDevice> {
        // SAFETY: a live instance.
        let devices = check(
            unsafe { self.instance.enumerate_physical_devices() },
            "vkEnumeratePhysicalDevices",
        )?;
        devices
            .first()
            .copied()
            .ok_or_else(|| "no Vulkan device".to_string())
    }

    /// Destroys the instance and returns every validation message it collected, those
    /// that validation gave at the destruction included (objects left alive).
    pub fn destroy_reporting(self) -> Vec<String> {
        let messages = Arc::clone(&self.messages);
        self.destroy();
        let collected = messages.lock().map(|m| m.clone()).unwrap_or_default();
        collected
    }

    pub fn destroy(self) {
        // SAFETY: every child object was destroyed by the caller.
        unsafe {
            if let Some((loader, messenger)) = &self.debug {
                loader.destroy_debug_utils_messenger(*messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}
