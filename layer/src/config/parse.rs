//! The contract parsed from the variables' values: each rule, and what is said when a value
//! is not understood.

use super::settings::{
    CONTROL, COUNTERS, FRAMES, INSTRUMENT, LOG, TRACE, TRACEPOINTS, TRACE_FILE, TRACE_FORMAT,
};
use super::values::{
    parse_counters, parse_formats, parse_frames, parse_switch, unknown_sequences, Switch,
};
use super::{
    expand_path, Config, Destination, Format, DEFAULT_PERFETTO_BUFFER_KB, DEFAULT_PERFETTO_FILE,
    MAX_PERFETTO_BUFFER_KB, MIN_PERFETTO_BUFFER_KB, NOT_TEXT,
};

impl Config {
    /// Parses the contract from `lookup`. `privileged` is true in a setuid/setgid process,
    /// which ignores `GPU_TRACEFILE` as Mesa does.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>, privileged: bool) -> Config {
        let mut problems = Vec::new();

        let log_level = match lookup(LOG.alias) {
            None => log::LevelFilter::Warn,
            Some(v) => match v.trim().parse::<log::LevelFilter>() {
                Ok(level) => level,
                Err(_) => {
                    problems.push(format!(
                        "{}={v:?} is not one of off, error, warn, info, debug, trace; using warn",
                        LOG.alias
                    ));
                    log::LevelFilter::Warn
                }
            },
        };

        let mut enabled = false;
        // `GPU_TRACE=0` said in so many words (not an empty value) switches tracing off even
        // where `GPU_TRACEFILE` would switch it on.
        let mut switched_off = false;
        if let Some(v) = lookup(TRACE.alias) {
            match parse_switch(&v) {
                Switch::On => enabled = true,
                Switch::Off => switched_off = !v.trim().is_empty(),
                Switch::Unrecognised => {
                    problems.push(format!(
                        "{}={v:?} is not a recognised value (use 1 or 0); tracing is on",
                        TRACE.alias
                    ));
                    enabled = true;
                }
            }
        }

        let mut destination = Destination::Stdout;
        match lookup(TRACE_FILE.alias) {
            // Said by the caller, which knows the value.
            Some(path) if path == NOT_TEXT => enabled = true,
            Some(path) if !path.is_empty() => {
                if privileged {
                    problems.push(
                        "GPU_TRACEFILE is ignored in a setuid/setgid process; tracing to stdout"
                            .to_string(),
                    );
                } else {
                    let unknown = unknown_sequences(&path);
                    if !unknown.is_empty() {
                        problems.push(format!(
                            "{}={path:?}: {} not one of %p (pid), %i (device), %% (a %); kept as written",
                            TRACE_FILE.alias,
                            unknown.join(", ") + if unknown.len() == 1 { " is" } else { " are" }
                        ));
                    }
                    destination = Destination::File(path);
                }
                enabled = true;
            }
            _ => {}
        }

        if switched_off && enabled {
            problems.push(format!(
                "{}={:?} switches tracing off; GPU_TRACEFILE is not used",
                TRACE.alias,
                lookup(TRACE.alias).unwrap_or_default()
            ));
            enabled = false;
        }

        let format_set = lookup(TRACE_FORMAT.alias);
        let formats = match format_set.clone() {
            // A file's name may say the format by itself (`.pftrace`, `.json`, `.csv`).
            None => match &destination {
                Destination::File(p) => vec![Format::of_name(p).unwrap_or(Format::Txt)],
                Destination::Stdout => vec![Format::Txt],
            },
            Some(v) => parse_formats(&v, &mut problems),
        };
        if formats.contains(&Format::Perfetto) && destination == Destination::Stdout {
            // A binary trace on stdout would be mixed with the application's output.
            if enabled {
                problems.push(format!(
                    "{}={:?}: perfetto writes a file and GPU_TRACEFILE is not set; writing {}",
                    TRACE_FORMAT.alias,
                    format_set.as_deref().unwrap_or_default(),
                    expand_path(DEFAULT_PERFETTO_FILE, std::process::id(), 0).display()
                ));
            }
            destination = Destination::File(DEFAULT_PERFETTO_FILE.to_string());
        }
        let disabled = lookup("UTRACE_DISABLE").is_some_and(|v| parse_switch(&v) == Switch::On);
        if disabled {
            enabled = false;
        }
        let on_demand = !enabled && !disabled;
        if on_demand && format_set.is_some() {
            // Captures and system sessions name their own format: this one would write nothing.
            problems.push(format!(
                "{}={:?} is set but tracing is off; set GPU_TRACE=1 or GPU_TRACEFILE=PATH to trace",
                TRACE_FORMAT.alias,
                format_set.as_deref().unwrap_or_default()
            ));
        }
        let perfetto_buffer_kb = match lookup("UTRACE_PERFETTO_BUFFER_KB") {
            None => DEFAULT_PERFETTO_BUFFER_KB,
            Some(v) => match v.trim().parse::<u64>() {
                Ok(kb) if (MIN_PERFETTO_BUFFER_KB..=MAX_PERFETTO_BUFFER_KB).contains(&kb) => {
                    kb as u32
                }
                Ok(kb) => {
                    let used = kb.clamp(MIN_PERFETTO_BUFFER_KB, MAX_PERFETTO_BUFFER_KB);
                    problems.push(format!(
                        "UTRACE_PERFETTO_BUFFER_KB={v:?} is outside {MIN_PERFETTO_BUFFER_KB} (1 MiB) to {MAX_PERFETTO_BUFFER_KB} (1 GiB); using {used}"
                    ));
                    used as u32
                }
                Err(_) => {
                    problems.push(format!(
                        "UTRACE_PERFETTO_BUFFER_KB={v:?} is not a size in KiB; using {DEFAULT_PERFETTO_BUFFER_KB}"
                    ));
                    DEFAULT_PERFETTO_BUFFER_KB
                }
            },
        };
        let force_measured_clock =
            lookup("UTRACE_FORCE_MEASURED_CLOCK").is_some_and(|v| parse_switch(&v) == Switch::On);

        let frames = match lookup(FRAMES.alias) {
            None => None,
            Some(v) => match parse_frames(&v) {
                Some(range) => Some(range),
                None => {
                    problems.push(format!(
                        "{}={v:?} is not FIRST-LAST (e.g. 3-5) with FIRST <= LAST; tracing every frame",
                        FRAMES.alias
                    ));
                    None
                }
            },
        };
        let instrument = match lookup(INSTRUMENT.alias) {
            None => false,
            Some(v) => match parse_switch(&v) {
                Switch::On => true,
                Switch::Off => false,
                Switch::Unrecognised => {
                    problems.push(format!(
                        "{}={v:?} is not a recognised value (use 1 or 0); instrumenting",
                        INSTRUMENT.alias
                    ));
                    true
                }
            },
        };
        let tracepoints = lookup(TRACEPOINTS.alias);
        let counters = lookup(COUNTERS.alias).map_or_else(Default::default, |v| {
            parse_counters(COUNTERS.alias, &v, &mut problems)
        });
        let control = match lookup(CONTROL.alias) {
            None => true,
            Some(v) => match parse_switch(&v) {
                Switch::On => true,
                Switch::Off => v.trim().is_empty(),
                Switch::Unrecognised => {
                    problems.push(format!(
                        "{}={v:?} is not a recognised value (use 1 or 0); the control socket is offered",
                        CONTROL.alias
                    ));
                    true
                }
            },
        };
        let force_fence =
            lookup("UTRACE_FORCE_FENCE").is_some_and(|v| parse_switch(&v) == Switch::On);

        Config {
            enabled,
            destination,
            formats,
            on_demand,
            perfetto_buffer_kb,
            force_measured_clock,
            log_level,
            frames,
            instrument,
            tracepoints,
            counters,
            force_fence,
            control,
            problems,
            settings: Vec::new(),
        }
    }
}
