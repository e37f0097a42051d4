//! The process's configuration, made once, at the first `vkCreateInstance`: read (by
//! [`crate::config`], plain data), then acted on here, once: the logger started, the
//! problems and settings said, the `GPU_TRACEPOINTS` switches applied (before any device
//! exists; they never change after).

use std::sync::OnceLock;

use crate::config::{settings, Config};

/// The process's configuration (see [`get_with_app`]).
pub fn get() -> &'static Config {
    get_with_app(Vec::new)
}

/// The process's configuration; on first use read from the environment, the settings file
/// and the application's settings `app` (given at the first `vkCreateInstance`: the
/// process's configuration is made once, so a later instance's settings are not used, and
/// said so).
pub fn get_with_app(app: impl FnOnce() -> settings::Entries) -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    let mut app = Some(app);
    let config = CONFIG.get_or_init(|| {
        let app = app.take().map(|f| f()).unwrap_or_default();
        let config = Config::load(&app);
        apply(&config);
        config
    });
    if let Some(later) = app {
        if !later().is_empty() {
            log::info!(
                "an instance created after the first gives VK_LAYER_utrace settings; the process's configuration was made at the first and stays"
            );
        }
    }
    config
}

/// What the configuration changes in the process, done once.
fn apply(config: &Config) {
    crate::logger::init(config.log_level);
    log::info!("VK_LAYER_utrace {}", crate::VERSION);
    crate::sink::csv::use_counter_columns(match &config.counters {
        crate::config::Counters::Pipeline => {
            Some(utrace_format::COUNTER_NAMES.map(String::from).to_vec())
        }
        crate::config::Counters::Perf(names) => {
            Some(names.iter().map(|n| utrace_format::perf_key(n)).collect())
        }
        crate::config::Counters::Off => None,
    });
    for problem in &config.problems {
        log::warn!("{problem}");
    }
    for line in &config.settings {
        log::info!("setting {line}");
    }
    if let Some(list) = &config.tracepoints {
        let unknown = crate::trace::tracepoints::apply_toggles(list);
        if !unknown.is_empty() {
            log::warn!(
                "GPU_TRACEPOINTS names unknown tracepoints {unknown:?} (known: {}); the others apply",
                crate::trace::tracepoints::toggle_names().join(", ")
            );
        }
    }
}
