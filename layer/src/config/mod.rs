//! The environment contract (README, "Environment"), read once per process.
//!
//! Parsing is pure: [`Config::from_lookup`] takes a variable look-up so that every rule is
//! unit-tested without touching the process environment. Problems with a value never stop
//! the application: they become [`Config::problems`], printed once when the layer loads.

pub mod settings;
mod settings_file;
mod values;

pub use values::{expand_path, Format};
use values::{
    format_of_name, is_setid_process, parse_formats, parse_frames, parse_switch, unknown_sequences,
    Switch,
};

/// Where the trace goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    /// A path template: `%p` becomes the pid, `%i` the device index.
    File(String),
}

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
        let env = |name: &str| std::env::var(name).ok();
        Config::from_sources(&env, app, is_setid_process())
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

    /// Parses the contract from `lookup`. `privileged` is true in a setuid/setgid process,
    /// which ignores `GPU_TRACEFILE` as Mesa does.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>, privileged: bool) -> Config {
        let mut problems = Vec::new();

        let log_level = match lookup("UTRACE_LOG") {
            None => log::LevelFilter::Warn,
            Some(v) => match v.trim().parse::<log::LevelFilter>() {
                Ok(level) => level,
                Err(_) => {
                    problems.push(format!(
                        "UTRACE_LOG={v:?} is not one of off, error, warn, info, debug, trace; using warn"
                    ));
                    log::LevelFilter::Warn
                }
            },
        };

        let mut enabled = false;
        // `GPU_TRACE=0` said in so many words (not an empty value) switches tracing off even
        // where `GPU_TRACEFILE` would switch it on.
        let mut switched_off = false;
        if let Some(v) = lookup("GPU_TRACE") {
            match parse_switch(&v) {
                Switch::On => enabled = true,
                Switch::Off => switched_off = !v.trim().is_empty(),
                Switch::Unrecognised => {
                    problems.push(format!(
                        "GPU_TRACE={v:?} is not a recognised value (use 1 or 0); tracing is on"
                    ));
                    enabled = true;
                }
            }
        }

        let mut destination = Destination::Stdout;
        match lookup("GPU_TRACEFILE") {
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
                            "GPU_TRACEFILE={path:?}: {} not one of %p (pid), %i (device), %% (a %); kept as written",
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
                "GPU_TRACE={:?} switches tracing off; GPU_TRACEFILE is not used",
                lookup("GPU_TRACE").unwrap_or_default()
            ));
            enabled = false;
        }

        let formats = match lookup("GPU_TRACE_FORMAT") {
            // A file's name may say the format by itself (`.pftrace`, `.json`, `.csv`).
            None => match &destination {
                Destination::File(p) => vec![format_of_name(p).unwrap_or(Format::Txt)],
                Destination::Stdout => vec![Format::Txt],
            },
            Some(v) => parse_formats(&v, &mut problems),
        };
        if formats.contains(&Format::Perfetto) && destination == Destination::Stdout {
            // A binary trace on stdout would be mixed with the application's output.
            if enabled {
                problems.push(format!(
                    "GPU_TRACE_FORMAT=perfetto writes a file and GPU_TRACEFILE is not set; writing {}",
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

        let frames = match lookup("GPU_TRACE_FRAMES") {
            None => None,
            Some(v) => match parse_frames(&v) {
                Some(range) => Some(range),
                None => {
                    problems.push(format!(
                        "GPU_TRACE_FRAMES={v:?} is not FIRST-LAST (e.g. 3-5) with FIRST <= LAST; tracing every frame"
                    ));
                    None
                }
            },
        };
        let instrument = match lookup("GPU_TRACE_INSTRUMENT") {
            None => false,
            Some(v) => match parse_switch(&v) {
                Switch::On => true,
                Switch::Off => false,
                Switch::Unrecognised => {
                    problems.push(format!(
                        "GPU_TRACE_INSTRUMENT={v:?} is not a recognised value (use 1 or 0); instrumenting"
                    ));
                    true
                }
            },
        };
        let tracepoints = lookup("GPU_TRACEPOINTS");
        let control = match lookup("UTRACE_CONTROL") {
            None => true,
            Some(v) => match parse_switch(&v) {
                Switch::On => true,
                Switch::Off => v.trim().is_empty(),
                Switch::Unrecognised => {
                    problems.push(format!(
                        "UTRACE_CONTROL={v:?} is not a recognised value (use 1 or 0); the control socket is offered"
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
            force_fence,
            control,
            problems,
            settings: Vec::new(),
        }
    }
}

/// The in-process Perfetto session's buffer: large enough for about half a million render
/// stages. The service empties it into the file every second; more than it holds within
/// one second overwrites the oldest.
pub const DEFAULT_PERFETTO_BUFFER_KB: u32 = 64 * 1024;
/// Smaller rings wrap within a second under ordinary loads (64 KiB and 256 KiB did).
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
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> Config {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(
            |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            false,
        )
    }

    #[test]
    fn nothing_set_means_off() {
        let c = parse(&[]);
        assert!(!c.enabled);
        assert!(c.problems.is_empty());
    }

    #[test]
    fn gpu_trace_spellings() {
        for on in ["1", "true", "YES", "on"] {
            assert!(parse(&[("GPU_TRACE", on)]).enabled, "{on}");
        }
        for off in ["0", "false", "no", "off", ""] {
            let c = parse(&[("GPU_TRACE", off)]);
            assert!(!c.enabled, "{off}");
            assert!(c.problems.is_empty());
        }
    }

    #[test]
    fn unrecognised_gpu_trace_is_reported_and_on() {
        let c = parse(&[("GPU_TRACE", "banana")]);
        assert!(c.enabled);
        assert_eq!(c.problems.len(), 1);
        assert!(c.problems[0].contains("GPU_TRACE") && c.problems[0].contains("banana"));
    }

    #[test]
    fn tracefile_enables_and_redirects() {
        let c = parse(&[("GPU_TRACEFILE", "/tmp/t-%p.txt")]);
        assert!(c.enabled);
        assert_eq!(c.destination, Destination::File("/tmp/t-%p.txt".into()));
    }

    #[test]
    fn setid_process_ignores_tracefile() {
        let c = Config::from_lookup(
            |n| (n == "GPU_TRACEFILE").then(|| "/tmp/x".to_string()),
            true,
        );
        assert!(c.enabled);
        assert_eq!(c.destination, Destination::Stdout);
        assert_eq!(c.problems.len(), 1);
    }

    #[test]
    fn bad_format_and_log_level_are_reported() {
        let c = parse(&[
            ("GPU_TRACE", "1"),
            ("GPU_TRACE_FORMAT", "xml"),
            ("UTRACE_LOG", "loud"),
        ]);
        assert_eq!(c.formats, vec![Format::Txt]);
        assert_eq!(c.log_level, log::LevelFilter::Warn);
        assert_eq!(
            parse(&[("GPU_TRACE_FORMAT", "JSON")]).formats,
            vec![Format::Json]
        );
        assert_eq!(
            parse(&[("GPU_TRACE_FORMAT", "csv")]).formats,
            vec![Format::Csv]
        );
        assert_eq!(c.problems.len(), 2);
    }

    #[test]
    fn perfetto_alone_or_with_one_text_format() {
        let c = parse(&[
            ("GPU_TRACEFILE", "/t/g.pftrace"),
            ("GPU_TRACE_FORMAT", "txt, Perfetto"),
        ]);
        assert_eq!(c.formats, vec![Format::Txt, Format::Perfetto]);
        assert!(c.problems.is_empty());
        let c = parse(&[("GPU_TRACE_FORMAT", "json,csv,perfetto,xml")]);
        assert_eq!(c.formats, vec![Format::Json, Format::Perfetto]);
        assert_eq!(c.problems.len(), 2, "{:?}", c.problems);
        // Formats are named as the user names them.
        assert!(
            c.problems[0].ends_with("; csv is left out"),
            "{}",
            c.problems[0]
        );
        // Without a file the Perfetto trace still goes somewhere, and the user is told.
        let c = parse(&[("GPU_TRACE", "1"), ("GPU_TRACE_FORMAT", "perfetto")]);
        assert_eq!(
            c.destination,
            Destination::File(DEFAULT_PERFETTO_FILE.into())
        );
        let expanded = format!("writing utrace-{}.pftrace", std::process::id());
        assert!(c.problems[0].ends_with(&expanded), "{}", c.problems[0]);
    }

    #[test]
    fn a_file_name_chooses_the_format() {
        let c = parse(&[("GPU_TRACEFILE", "/t/gpu-%p.pftrace")]);
        assert_eq!(c.formats, vec![Format::Perfetto]);
        let c = parse(&[("GPU_TRACEFILE", "x.perfetto-trace")]);
        assert_eq!(c.formats, vec![Format::Perfetto]);
        // So do json and csv names.
        for (name, format) in [
            ("t.json", Format::Json),
            ("t-%p.JSONL", Format::Json),
            ("/t/gpu.csv", Format::Csv),
        ] {
            assert_eq!(
                parse(&[("GPU_TRACEFILE", name)]).formats,
                vec![format],
                "{name}"
            );
        }
        // An explicit format wins; other names stay txt.
        let c = parse(&[("GPU_TRACEFILE", "x.pftrace"), ("GPU_TRACE_FORMAT", "json")]);
        assert_eq!(c.formats, vec![Format::Json]);
        let c = parse(&[("GPU_TRACEFILE", "x.csv"), ("GPU_TRACE_FORMAT", "txt")]);
        assert_eq!(c.formats, vec![Format::Txt]);
        for name in ["x.txt", "x", "csv", "x.csv.gz"] {
            assert_eq!(
                parse(&[("GPU_TRACEFILE", name)]).formats,
                vec![Format::Txt],
                "{name}"
            );
        }
    }

    #[test]
    fn an_unknown_percent_sequence_in_the_file_name_is_said() {
        let c = parse(&[("GPU_TRACEFILE", "/t/x-%q.txt")]);
        assert_eq!(c.destination, Destination::File("/t/x-%q.txt".into()));
        assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
        assert!(
            c.problems[0].contains("%q is not one of %p"),
            "{}",
            c.problems[0]
        );
        assert!(parse(&[("GPU_TRACEFILE", "/t/x-%p-%i-%%.txt")])
            .problems
            .is_empty());
    }

    #[test]
    fn gpu_trace_0_switches_a_trace_file_off_and_says_so() {
        let c = parse(&[("GPU_TRACE", "0"), ("GPU_TRACEFILE", "/t/x.txt")]);
        assert!(!c.enabled);
        assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
        assert!(c.problems[0].contains("GPU_TRACE=\"0\" switches tracing off"));
        // An empty GPU_TRACE is as if unset: the file switches tracing on.
        let c = parse(&[("GPU_TRACE", ""), ("GPU_TRACEFILE", "/t/x.txt")]);
        assert!(c.enabled && c.problems.is_empty());
        // Without a file, 0 is simply off, with nothing to say.
        assert!(parse(&[("GPU_TRACE", "off")]).problems.is_empty());
    }

    #[test]
    fn on_demand_unless_asked_for_a_trace_or_disabled() {
        assert!(parse(&[]).on_demand);
        assert!(!parse(&[("GPU_TRACE", "1")]).on_demand);
        let c = parse(&[("GPU_TRACE", "1"), ("UTRACE_DISABLE", "1")]);
        assert!(!c.on_demand && !c.enabled);
        assert_eq!(
            parse(&[("UTRACE_PERFETTO_BUFFER_KB", "4096")]).perfetto_buffer_kb,
            4096
        );
    }

    #[test]
    fn a_perfetto_buffer_size_out_of_bounds_is_clamped_and_said() {
        for (value, used, says) in [
            (
                "12",
                1024,
                "outside 1024 (1 MiB) to 1048576 (1 GiB); using 1024",
            ),
            ("256", 1024, "using 1024"),
            ("4194304", 1048576, "using 1048576"),
            ("99999999999", 1048576, "using 1048576"),
            ("lots", DEFAULT_PERFETTO_BUFFER_KB, "is not a size in KiB"),
            ("-5", DEFAULT_PERFETTO_BUFFER_KB, "is not a size in KiB"),
        ] {
            let c = parse(&[("UTRACE_PERFETTO_BUFFER_KB", value)]);
            assert_eq!(c.perfetto_buffer_kb, used, "{value}");
            assert_eq!(c.problems.len(), 1, "{value}: {:?}", c.problems);
            assert!(
                c.problems[0].contains(value) && c.problems[0].contains(says),
                "{value}: {}",
                c.problems[0]
            );
        }
    }

    #[test]
    fn frames_and_instrument() {
        let c = parse(&[
            ("GPU_TRACE", "1"),
            ("GPU_TRACE_FRAMES", "3-5"),
            ("GPU_TRACE_INSTRUMENT", "1"),
        ]);
        assert_eq!(c.frames, Some((3, 5)));
        assert!(c.instrument);
        assert!(c.problems.is_empty());
        assert_eq!(parse(&[("GPU_TRACE_FRAMES", " 7 ")]).frames, Some((7, 7)));
        for bad in ["5-3", "x-4", "3-", ""] {
            let c = parse(&[("GPU_TRACE_FRAMES", bad)]);
            assert_eq!(c.frames, None, "{bad}");
            assert_eq!(c.problems.len(), 1, "{bad}");
        }
    }
}
