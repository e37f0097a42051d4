//! The values the environment's variables take, each parsed on its own: formats, switches,
//! frame windows, path templates; and whether the process runs with another's privileges.

use std::path::PathBuf;

/// Output format of the trace (the format crate's, which the command reads).
pub use utrace_format::Format;

/// How a boolean-ish variable was understood.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Switch {
    On,
    Off,
    /// Not a recognised spelling: reported, and treated as on, because a user who sets the
    /// variable at all wants a trace (Mesa's `debug_get_bool_option` does the same).
    Unrecognised,
}

pub(super) fn parse_switch(value: &str) -> Switch {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" | "y" => Switch::On,
        "" | "0" | "false" | "no" | "off" | "n" => Switch::Off,
        _ => Switch::Unrecognised,
    }
}

/// `GPU_TRACE_FORMAT`: one format, or one text format and `perfetto` (`txt,perfetto`; the
/// text then goes to stdout and the Perfetto trace to `GPU_TRACEFILE`).
pub(super) fn parse_formats(value: &str, problems: &mut Vec<String>) -> Vec<Format> {
    let mut formats = Vec::new();
    let said_before = problems.len();
    for name in value.split(',').map(|n| n.trim().to_ascii_lowercase()) {
        if name.is_empty() {
            continue;
        }
        match Format::parse(&name) {
            Some(f) if formats.contains(&f) => {}
            Some(Format::Perfetto) => formats.push(Format::Perfetto),
            Some(f) if formats.iter().any(|g| *g != Format::Perfetto) => problems.push(format!(
                "GPU_TRACE_FORMAT={value:?} names more than one text format; {} is left out",
                f.name()
            )),
            Some(f) => formats.push(f),
            None => problems.push(format!(
                "GPU_TRACE_FORMAT={value:?}: {name:?} is not a supported format (txt, json, csv, perfetto); it is left out"
            )),
        }
    }
    if formats.is_empty() {
        // One line says what was wrong and what is written instead.
        if let Some(last) = problems
            .get_mut(said_before..)
            .and_then(<[String]>::last_mut)
        {
            last.push_str(", and txt is written instead");
        }
        formats.push(Format::Txt);
    }
    formats
}

/// `GPU_TRACE_COUNTERS`: the GPU counters collected beside each traced range.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Counters {
    /// Times only (the default).
    #[default]
    Off,
    /// Pipeline statistics queries (core Vulkan, `pipelineStatisticsQuery`).
    Pipeline,
    /// Hardware counters of VK_KHR_performance_query, by the names the driver gives them
    /// (`utrace counters` lists them), in the order asked.
    Perf(Vec<String>),
}

/// The most hardware counters one range carries (as many as the pipeline statistics).
pub const PERF_MAX: usize = utrace_format::COUNTER_NAMES.len();

/// `GPU_TRACE_COUNTERS`: `pipeline`, `perf:NAME,NAME,...` (names as the driver gives them,
/// matched without regard to case), or nothing (empty, `0`, `off`, `none`).
pub(super) fn parse_counters(name: &str, value: &str, problems: &mut Vec<String>) -> Counters {
    let v = value.trim().to_ascii_lowercase();
    match v.as_str() {
        "" | "0" | "off" | "none" => Counters::Off,
        "pipeline" => Counters::Pipeline,
        _ if v.starts_with("perf:") => {
            let mut names: Vec<String> = Vec::new();
            for n in value.trim()[5..].split(',').map(str::trim) {
                if n.is_empty() {
                    continue;
                }
                if names.iter().any(|have| have.eq_ignore_ascii_case(n)) {
                    problems.push(format!(
                        "{name}: the counter {n:?} is named twice; counted once"
                    ));
                } else {
                    names.push(n.to_string());
                }
            }
            if names.is_empty() {
                problems.push(format!(
                    "{name}={value:?} names no counter (perf:NAME,NAME,...; `utrace counters` lists them); no counters"
                ));
                return Counters::Off;
            }
            if names.len() > PERF_MAX {
                problems.push(format!(
                    "{name}: utrace collects at most {PERF_MAX} hardware counters at once; counting {}",
                    names[..PERF_MAX].join(", ")
                ));
                names.truncate(PERF_MAX);
            }
            Counters::Perf(names)
        }
        _ => {
            problems.push(format!(
                "{name}={value:?} is not a counter set (pipeline, or perf:NAME,...); no counters"
            ));
            Counters::Off
        }
    }
}

/// `FIRST-LAST` (or a single frame `N`) with FIRST <= LAST.
pub(super) fn parse_frames(value: &str) -> Option<(u32, u32)> {
    let value = value.trim();
    let (first, last) = value.split_once('-').unwrap_or((value, value));
    let (first, last) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
    (first <= last).then_some((first, last))
}

/// Expands `%p` (pid) and `%i` (device index) in a `GPU_TRACEFILE` template; `%%` is `%`.
pub fn expand_path(template: &str, pid: u32, device_index: u32) -> PathBuf {
    let mut out = String::with_capacity(template.len() + 8);
    let mut chars = template.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('p') => out.push_str(&pid.to_string()),
            Some('i') => out.push_str(&device_index.to_string()),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    PathBuf::from(out)
}

/// The `%` sequences of a `GPU_TRACEFILE` template that [`expand_path`] does not know (kept
/// as written).
pub(super) fn unknown_sequences(template: &str) -> Vec<String> {
    let mut unknown = Vec::new();
    let mut chars = template.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some('p' | 'i' | '%') => {}
                Some(other) => unknown.push(format!("%{other}")),
                None => unknown.push("%".into()),
            }
        }
    }
    unknown
}

/// True when real and effective user or group ids differ (setuid/setgid), read from
/// `/proc/self/status` so that no libc binding is needed.
pub(super) fn is_setid_process() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    let differs = |key: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .map(|ids| {
                let ids: Vec<&str> = ids.split_whitespace().collect();
                ids.len() >= 2 && ids[0] != ids[1]
            })
            .unwrap_or(false)
    };
    differs("Uid:") || differs("Gid:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_expansion() {
        assert_eq!(
            expand_path("/t/%p-%i-%%-%x.txt", 42, 3),
            PathBuf::from("/t/42-3-%-%x.txt")
        );
        assert_eq!(expand_path("trace%", 1, 0), PathBuf::from("trace%"));
        assert_eq!(unknown_sequences("/t/%p-%i-%%-%x.txt%"), ["%x", "%"]);
        assert!(unknown_sequences("/t/%p-%i-%%.txt").is_empty());
    }
}
