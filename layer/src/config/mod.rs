//! The environment contract (docs/environment.md), as plain data: reading it changes
//! nothing in the process (the entry reads it once, at the first `vkCreateInstance`, and
//! acts on it: the logger, the problems said, the tracepoint switches).
//!
//! Parsing is pure: [`Config::from_lookup`] takes a variable look-up so that every rule is
//! unit-tested without touching the process environment. Problems with a value never stop
//! the application: they become [`Config::problems`], printed once when the layer loads.

mod parse;
pub mod settings;
mod settings_file;
mod values;

use values::is_setid_process;
pub use values::{expand_path, Counters, Format, PERF_MAX};

/// Where the trace goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    /// A path template: `%p` becomes the pid, `%i` the device index.
    File(String),
}

/// What the environment's look-up gives for a `GPU_TRACEFILE` that is not UTF-8 text (no
/// variable's value can hold a NUL): it asks for a trace, written to stdout.
pub const NOT_TEXT: &str = "\0not UTF-8 text";

/// Where the Perfetto trace goes when `GPU_TRACEFILE` does not say.
pub const DEFAULT_PERFETTO_FILE: &str = "utrace-%p.pftrace";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Whether the variables ask for a trace (`GPU_TRACE`, `GPU_TRACEFILE`). When they do not,
    /// the layer traces on demand ([`Config::on_demand`]) or, disabled, passes every call
    /// through and creates nothing on the device.
    pub enabled: bool,
    pub destination: Destination,
    /// At most one text format (txt, json, csv) and maybe perfetto; never empty.
    pub formats: Vec<Format>,
    /// Neither `GPU_TRACE` nor `GPU_TRACEFILE` asked for a trace and `UTRACE_DISABLE` is not
    /// set: the layer registers its Perfetto data source with the system backend and traces
    /// while a session (`traced`) enables it.
    pub on_demand: bool,
    /// `UTRACE_PERFETTO_BUFFER_KB`: the in-process session's buffer (`GPU_TRACE_FORMAT=perfetto`).
    pub perfetto_buffer_kb: u32,
    /// `UTRACE_FORCE_MEASURED_CLOCK=1`: calibrate the GPU clock by a timestamp submission even
    /// where `VK_EXT/KHR_calibrated_timestamps` exists (the fallback, testable on any driver).
    pub force_measured_clock: bool,
    pub log_level: log::LevelFilter,
    /// `GPU_TRACE_FRAMES=FIRST-LAST`: the frames to trace (inclusive, counted from 0 at
    /// `vkQueuePresentKHR`); all frames when absent.
    pub frames: Option<(u32, u32)>,
    /// `GPU_TRACE_INSTRUMENT=1`: instrument every command buffer, even while no capture is
    /// active, so that a capture started later sees command buffers recorded before it.
    pub instrument: bool,
    /// `GPU_TRACEPOINTS`: switches over the spec's defaults (`-draw,+barrier`).
    pub tracepoints: Option<String>,
    /// `GPU_TRACE_COUNTERS`: GPU counters collected beside each traced range.
    pub counters: Counters,
    /// `UTRACE_FORCE_FENCE=1`: learn of batch completion through fences even where timeline
    /// semaphores exist (the fallback path, so that it can be tested on any driver).
    pub force_fence: bool,
    /// The control socket (`utrace capture`) is offered (the `control` setting, on by
    /// default).
    pub control: bool,
    /// Messages about malformed variables, each printed once.
    pub problems: Vec<String>,
    /// Each layer setting's value and where it came from (`UTRACE_LOG=info` prints them).
    pub settings: Vec<String>,
}

impl Config {
    /// The configuration from the process's environment, the settings file it leads to,
    /// and the application's settings `app`. Plain data: nothing else happens (the
    /// caller says the problems, starts the logger, applies the tracepoint switches).
    pub fn load(app: &settings::Entries) -> Config {
        // Variables set to something that is not UTF-8 text, each said once (they were
        // ignored without a word). The layer's values are text: a path it cannot hold as
        // text is not used, and the trace goes to stdout rather than nowhere.
        let not_text: std::cell::RefCell<Vec<(String, String)>> = Default::default();
        let is_path = |name: &str| {
            name == settings::TRACE_FILE.alias
                || name == settings::env_name(settings::TRACE_FILE.key)
        };
        let env = |name: &str| match std::env::var(name) {
            Ok(value) => Some(value),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(raw)) => {
                let mut seen = not_text.borrow_mut();
                if !seen.iter().any(|(n, _)| n == name) {
                    seen.push((name.to_string(), raw.to_string_lossy().into_owned()));
                }
                is_path(name).then(|| NOT_TEXT.to_string())
            }
        };
        let mut config = Config::from_sources(&env, app, is_setid_process());
        for (name, lossy) in not_text.into_inner() {
            let rest = if is_path(&name) {
                "the layer takes paths that are UTF-8 text only; tracing to stdout"
            } else {
                "ignored"
            };
            config
                .problems
                .push(format!("{name} is not UTF-8 text ({lossy:?}): {rest}"));
        }
        config
    }

    /// The contract from every source of settings (see [`settings`]): `env` for the
    /// environment, the settings file it leads to, and the application's `app`.
    pub fn from_sources(
        env: &dyn Fn(&str) -> Option<String>,
        app: &settings::Entries,
        privileged: bool,
    ) -> Config {
        let mut problems = Vec::new();
        let file = settings_file::read(env, &mut problems);
        let resolved = settings::Resolved::new(env, &file, app);
        let mut config = Config::from_lookup(
            |name| match resolved.value(name) {
                Some(value) => value,
                None => env(name),
            },
            privileged,
        );
        problems.extend(config.problems.drain(..).map(|p| resolved.name_origin(p)));
        config.problems = problems;
        config.settings = resolved.describe();
        config
    }
}

/// The in-process Perfetto session's buffer. The layer reads it into the file whenever a
/// quarter of it may have been written and every 100 ms (`sink::perfetto::file_drain`), so
/// it only holds what is written in between; a larger ring only takes more memory (it is
/// resident once it came round: 64 MiB, the default before, was half the layer's memory
/// at a million draws in one batch).
pub const DEFAULT_PERFETTO_BUFFER_KB: u32 = 2 * 1024;
/// Smaller rings wrapped within a second under ordinary loads when the service wrote them
/// out once a second (64 KiB and 256 KiB did).
pub const MIN_PERFETTO_BUFFER_KB: u64 = 1024;
/// Perfetto counts a buffer's bytes in 32 bits: 4 GiB became an empty trace. 1 GiB is as
/// much as a layer should take from an application.
pub const MAX_PERFETTO_BUFFER_KB: u64 = 1024 * 1024;

impl Config {
    /// Whether devices feed Perfetto: a file session or, on demand, a system one.
    pub fn perfetto(&self) -> bool {
        self.on_demand || (self.enabled && self.formats.contains(&Format::Perfetto))
    }
}

#[cfg(test)]
mod tests;
