//! What a traced device's core and outputs are told at `vkCreateDevice`: the options the
//! core reads of the configuration, the outputs' choice, and the trace's origin (the
//! device, its driver, the application, the settings in effect) for the header.

use ash::vk;

use crate::config::{Config, Counters};
use crate::gpu::caps::DeviceCaps;
use crate::loader::registry::Application;
use crate::sink::{self, origin::Origin};
use crate::trace::tracepoints::TOGGLES;
use crate::trace::TracerOptions;

/// What the trace core reads of the configuration.
pub fn tracer_options(config: &Config) -> TracerOptions {
    TracerOptions {
        frames: config.frames,
        instrument: config.instrument,
        perfetto: config.perfetto(),
        on_demand: config.on_demand,
    }
}

/// What the outputs read of the configuration.
pub fn output_choice(config: &Config) -> sink::OutputChoice {
    sink::OutputChoice {
        on_demand: config.on_demand,
        destination: config.destination.clone(),
        formats: config.formats.clone(),
        perfetto: config.perfetto(),
        perfetto_buffer_kb: config.perfetto_buffer_kb,
        frames: config.frames,
    }
}

/// `VkApplicationInfo`'s names and versions.
///
/// # Safety
/// `info` is null or points to a valid `VkApplicationInfo` whose names are null or
/// NUL-terminated.
pub unsafe fn application(info: *const vk::ApplicationInfo<'_>) -> Application {
    // SAFETY: as the caller promises.
    let Some(info) = (unsafe { info.as_ref() }) else {
        return Application::default();
    };
    let text = |name: *const std::ffi::c_char| {
        if name.is_null() {
            return String::new();
        }
        // SAFETY: a non-null name is NUL-terminated, as the caller promises.
        unsafe { std::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    };
    Application {
        name: text(info.p_application_name),
        version: info.application_version,
        engine_name: text(info.p_engine_name),
        engine_version: info.engine_version,
    }
}

/// The tracepoints switched away from the spec's defaults (`-draw,+barrier`), in the
/// spec's order, or `default`: the same choice always reads the same.
fn tracepoints_in_effect() -> String {
    let changed: Vec<String> = TOGGLES
        .iter()
        .filter(|t| t.is_enabled() != t.default)
        .map(|t| format!("{}{}", if t.is_enabled() { '+' } else { '-' }, t.name))
        .collect();
    if changed.is_empty() {
        "default".into()
    } else {
        changed.join(",")
    }
}

/// What the header says of the trace's device, application and settings.
pub fn origin(caps: &DeviceCaps, app: &Application, config: &Config) -> Origin {
    Origin {
        device_name: caps.device_name.clone(),
        vendor_id: caps.vendor_id,
        device_id: caps.device_id,
        driver_name: caps.driver_name.clone(),
        driver_info: caps.driver_info.clone(),
        driver_version: caps.driver_version,
        api_version: caps.api_version,
        timestamp_period: caps.timestamp_period,
        valid_bits: caps
            .families
            .iter()
            .map(|f| f.timestamp_valid_bits)
            .collect(),
        app_name: app.name.clone(),
        app_version: app.version,
        engine_name: app.engine_name.clone(),
        engine_version: app.engine_version,
        tracepoints: tracepoints_in_effect(),
        counters: match &config.counters {
            Counters::Off => "off".into(),
            Counters::Pipeline => "pipeline".into(),
            Counters::Perf(names) => format!("perf:{}", names.join(",")),
        },
        frames: config.frames,
        instrument: config.instrument,
    }
}
