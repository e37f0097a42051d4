//! Layer settings, the way Vulkan developers configure layers (the validation layer, API
//! dump, VulkanProfiler): each of utrace's settings is read, first found wins, from
//!
//! 1. the environment: `VK_UTRACE_<KEY>` (e.g. `VK_UTRACE_TRACE_FILE`), then the older
//!    names (`GPU_TRACE*`, `UTRACE_LOG`), which stay as aliases;
//! 2. the settings file `vk_layer_settings.txt` (lines `utrace.<key> = value`; see
//!    [`super::settings_file`]), as Vulkan Configurator writes it;
//! 3. the application's `VkLayerSettingsCreateInfoEXT`, chained to `VkInstanceCreateInfo`.
//!
//! The parsing rules stay those of [`super::Config::from_lookup`], fed by the older names;
//! a complaint about a value names where the value came from.

/// One setting: its key (the manifest's, vkconfig's, the settings file's) and the older
/// environment variable it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    pub key: &'static str,
    pub alias: &'static str,
}

/// Declares each setting once, as a constant that the parsing rules name, and lists them all
/// in [`SETTINGS`].
macro_rules! settings {
    ($($(#[$doc:meta])* $name:ident = $key:literal, $alias:literal;)*) => {
        $($(#[$doc])* pub const $name: Setting = Setting { key: $key, alias: $alias };)*

        /// Every setting, in the manifests' order (a test holds them to it).
        pub const SETTINGS: &[Setting] = &[$($name),*];
    };
}

settings! {
    /// Trace every frame.
    TRACE = "trace", "GPU_TRACE";
    /// Where the trace goes.
    TRACE_FILE = "trace_file", "GPU_TRACEFILE";
    /// The trace's formats.
    TRACE_FORMAT = "trace_format", "GPU_TRACE_FORMAT";
    /// The frames to trace.
    FRAMES = "frames", "GPU_TRACE_FRAMES";
    /// Instrument every command buffer, even outside a capture.
    INSTRUMENT = "instrument", "GPU_TRACE_INSTRUMENT";
    /// Tracepoints switched on or off.
    TRACEPOINTS = "tracepoints", "GPU_TRACEPOINTS";
    /// GPU counters beside each traced range.
    COUNTERS = "counters", "GPU_TRACE_COUNTERS";
    /// The layer's own messages.
    LOG = "log", "UTRACE_LOG";
    /// The control socket.
    CONTROL = "control", "UTRACE_CONTROL";
}

/// The environment variable of `key`: `VK_UTRACE_` and the key in capitals.
pub fn env_name(key: &str) -> String {
    format!("VK_UTRACE_{}", key.to_ascii_uppercase())
}

/// Where a setting's value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Environment(String),
    File { path: String, line: usize },
    Application,
}

impl Origin {
    fn describe(&self, key: &str) -> String {
        match self {
            Origin::Environment(var) => var.clone(),
            Origin::File { path, line } => format!("utrace.{key} ({path}:{line})"),
            Origin::Application => {
                format!("{key} (the application's VkLayerSettingsCreateInfoEXT)")
            }
        }
    }
}

/// Values from the settings file and the application: (key, value, origin).
pub type Entries = Vec<(String, String, Origin)>;

/// Each setting's value and origin, resolved in precedence order.
pub struct Resolved {
    values: Vec<Option<(String, Origin)>>,
}

impl Resolved {
    pub fn new(env: &dyn Fn(&str) -> Option<String>, file: &Entries, app: &Entries) -> Resolved {
        let values = SETTINGS
            .iter()
            .map(|s| {
                let new_name = env_name(s.key);
                if let Some(v) = env(&new_name) {
                    return Some((v, Origin::Environment(new_name)));
                }
                if let Some(v) = env(s.alias) {
                    return Some((v, Origin::Environment(s.alias.to_string())));
                }
                file.iter()
                    .chain(app.iter())
                    .find(|(k, _, _)| k == s.key)
                    .map(|(_, v, o)| (v.clone(), o.clone()))
            })
            .collect();
        Resolved { values }
    }

    fn index(name: &str) -> Option<usize> {
        SETTINGS.iter().position(|s| s.alias == name)
    }

    /// The value for an older variable name (what `Config::from_lookup` asks), or `None` for
    /// names that are not settings (they are read from the environment alone).
    pub fn value(&self, alias: &str) -> Option<Option<String>> {
        let i = Self::index(alias)?;
        Some(self.values[i].as_ref().map(|(v, _)| v.clone()))
    }

    /// A complaint `NAME=...` about a setting, its name replaced by where the value came
    /// from (`VK_UTRACE_TRACE_FORMAT=...`, `utrace.trace_format (path:3)=...`).
    pub fn name_origin(&self, problem: String) -> String {
        for (i, s) in SETTINGS.iter().enumerate() {
            if let Some(rest) = problem.strip_prefix(&format!("{}=", s.alias)) {
                if let Some((_, origin)) = &self.values[i] {
                    return format!("{}={rest}", origin.describe(s.key));
                }
            }
        }
        problem
    }

    /// One line per setting: its value and where it came from (`UTRACE_LOG=info`).
    pub fn describe(&self) -> Vec<String> {
        SETTINGS
            .iter()
            .zip(&self.values)
            .map(|(s, v)| match v {
                Some((value, origin)) => {
                    format!("{} = {value:?} (from {})", s.key, origin.describe(s.key))
                }
                None => format!("{} unset (default)", s.key),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, value: &str, origin: Origin) -> (String, String, Origin) {
        (key.into(), value.into(), origin)
    }

    #[test]
    fn environment_then_file_then_application() {
        let file_origin = Origin::File {
            path: "/x/vk_layer_settings.txt".into(),
            line: 3,
        };
        let file = vec![
            entry("trace_format", "json", file_origin.clone()),
            entry("frames", "2-4", file_origin.clone()),
        ];
        let app = vec![
            entry("trace_format", "csv", Origin::Application),
            entry("frames", "9-9", Origin::Application),
            entry("instrument", "true", Origin::Application),
        ];
        let env = |name: &str| match name {
            "VK_UTRACE_TRACE_FORMAT" => Some("perfetto".to_string()),
            "GPU_TRACE_FORMAT" => Some("txt".to_string()),
            "GPU_TRACE" => Some("1".to_string()),
            _ => None,
        };
        let r = Resolved::new(&env, &file, &app);
        assert_eq!(
            r.value("GPU_TRACE_FORMAT"),
            Some(Some("perfetto".into())),
            "the new name first"
        );
        assert_eq!(r.value("GPU_TRACE"), Some(Some("1".into())), "the alias");
        assert_eq!(
            r.value("GPU_TRACE_FRAMES"),
            Some(Some("2-4".into())),
            "the file over the application"
        );
        assert_eq!(r.value("GPU_TRACE_INSTRUMENT"), Some(Some("true".into())));
        assert_eq!(r.value("GPU_TRACEPOINTS"), Some(None));
        assert_eq!(r.value("UTRACE_DISABLE"), None, "not a setting");
        assert_eq!(
            r.name_origin("GPU_TRACE_FRAMES=\"2-4\" is bad".into()),
            "utrace.frames (/x/vk_layer_settings.txt:3)=\"2-4\" is bad"
        );
        assert_eq!(
            r.name_origin("GPU_TRACE_FORMAT=\"perfetto\" x".into()),
            "VK_UTRACE_TRACE_FORMAT=\"perfetto\" x"
        );
        let lines = r.describe();
        assert!(lines.contains(&"instrument = \"true\" (from instrument (the application's VkLayerSettingsCreateInfoEXT))".to_string()), "{lines:?}");
        assert!(lines.contains(&"tracepoints unset (default)".to_string()));
    }

    /// Both manifests declare the settings of [`SETTINGS`], in its order, each with its
    /// environment variable and its older name in the description, so that vkconfig offers
    /// exactly what the layer reads.
    #[test]
    fn the_manifests_declare_the_settings_of_the_table() {
        for (name, text) in [
            (
                "VkLayer_utrace.json",
                include_str!("../../../manifest/VkLayer_utrace.json"),
            ),
            (
                "VkLayer_utrace_implicit.json",
                include_str!("../../../manifest/VkLayer_utrace_implicit.json"),
            ),
        ] {
            let manifest: serde_json::Value = serde_json::from_str(text).expect(name);
            let declared = manifest["layer"]["features"]["settings"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: features.settings"));
            let keys: Vec<&str> = declared.iter().filter_map(|s| s["key"].as_str()).collect();
            let table: Vec<&str> = SETTINGS.iter().map(|s| s.key).collect();
            assert_eq!(keys, table, "{name}");
            for (entry, setting) in declared.iter().zip(SETTINGS) {
                assert_eq!(entry["env"], env_name(setting.key), "{name}");
                let description = entry["description"].as_str().unwrap_or_default();
                assert!(
                    description.contains(setting.alias),
                    "{name}: {}'s description names {}",
                    setting.key,
                    setting.alias
                );
            }
        }
    }
}
