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
pub struct Setting {
    pub key: &'static str,
    pub alias: &'static str,
}

pub const SETTINGS: &[Setting] = &[
    Setting {
        key: "trace",
        alias: "GPU_TRACE",
    },
    Setting {
        key: "trace_file",
        alias: "GPU_TRACEFILE",
    },
    Setting {
        key: "trace_format",
        alias: "GPU_TRACE_FORMAT",
    },
    Setting {
        key: "frames",
        alias: "GPU_TRACE_FRAMES",
    },
    Setting {
        key: "instrument",
        alias: "GPU_TRACE_INSTRUMENT",
    },
    Setting {
        key: "tracepoints",
        alias: "GPU_TRACEPOINTS",
    },
    Setting {
        key: "log",
        alias: "UTRACE_LOG",
    },
    Setting {
        key: "control",
        alias: "UTRACE_CONTROL",
    },
];

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
}
