//! `utrace diff` over runs. A side is one trace, or a folder of traces, one per run of the
//! application (as `utrace bench` writes them). Between runs the ranges of one trace are
//! not independent samples (the same frame, the same caches); runs are. So with folders
//! the unit of comparison is the run: each group gets one value per run (its median
//! duration, or its total per frame), and those values are compared across the runs.
//! Traces whose headers disagree on what changes the timing (the device, the driver, the
//! settings that choose what is timed) are refused unless the user says otherwise.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use utrace_format::header::TIMING_KEYS;

use crate::analysis::groups::By;
use crate::analysis::ranges;
use crate::analysis::significance::median;
use crate::trace::Trace;

/// The value each run gives a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Stat {
    /// The median duration of the group's ranges in the run.
    Median,
    /// The total duration of the group's ranges in the run, per frame traced.
    PerFrame,
}

impl Stat {
    pub fn said(self) -> &'static str {
        match self {
            Stat::Median => "each run's median duration per group",
            Stat::PerFrame => "each run's total duration per frame per group",
        }
    }
}

/// One side of a comparison: its runs' traces, in the order of their names.
pub struct Side {
    pub runs: Vec<(PathBuf, Trace)>,
}

/// File names the layer and `utrace bench` give traces.
const TRACE_EXTENSIONS: [&str; 6] = ["txt", "json", "jsonl", "csv", "pftrace", "perfetto-trace"];

/// The traces at `path`: the file itself, or every trace in the folder (not in its
/// subfolders), sorted by name.
pub fn load_side(path: &Path) -> Result<Side, String> {
    let files = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                // `utrace bench`'s list of its runs is not one of them.
                p.is_file()
                    && p.file_name().is_some_and(|n| n != "runs.json")
                    && p.extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| TRACE_EXTENSIONS.contains(&e))
            })
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(format!(
                "{}: no trace in the folder (files named *.txt, *.json, *.csv or *.pftrace)",
                path.display()
            ));
        }
        files
    } else {
        vec![path.to_path_buf()]
    };
    let runs = files
        .into_iter()
        .map(|f| crate::trace::load(&f).map(|t| (f, t)))
        .collect::<Result<_, _>>()?;
    Ok(Side { runs })
}

/// Each group's value in each run of `side` (a group missing from a run has no value
/// for it), in ns.
pub fn run_values(side: &Side, by: By, stat: Stat) -> BTreeMap<String, Vec<u64>> {
    let spec = ranges::Spec::built_in();
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (_, trace) in &side.runs {
        let groups = super::durations(&ranges::pair(trace, &spec), by);
        let mut frames: Vec<(u32, u64)> =
            trace.batches.iter().map(|b| (b.device, b.frame)).collect();
        frames.sort_unstable();
        frames.dedup();
        let frames = frames.len().max(1) as u64;
        for (k, mut durations) in groups {
            let value = match stat {
                Stat::Median => median(&mut durations).round() as u64,
                Stat::PerFrame => durations.iter().sum::<u64>() / frames,
            };
            out.entry(k).or_default().push(value);
        }
    }
    out
}

/// Where the traces' headers disagree on what changes the timing: a line per key, with
/// each value and the runs that have it. Traces without a header (older layers) are not
/// judged.
pub fn mismatches(a: &Side, b: &Side) -> Vec<String> {
    let mut out = Vec::new();
    for key in TIMING_KEYS {
        // Each distinct value, with where it was seen ("A" or "B", and how many runs).
        let mut seen: Vec<(String, usize, usize)> = Vec::new();
        for (side, is_a) in [(a, true), (b, false)] {
            for (_, trace) in &side.runs {
                for origin in &trace.origins {
                    let value = origin.get(key).unwrap_or_default().to_string();
                    let at = match seen.iter().position(|(v, _, _)| *v == value) {
                        Some(at) => at,
                        None => {
                            seen.push((value, 0, 0));
                            seen.len() - 1
                        }
                    };
                    if is_a {
                        seen[at].1 += 1;
                    } else {
                        seen[at].2 += 1;
                    }
                }
            }
        }
        if seen.len() > 1 {
            let values: Vec<String> = seen
                .iter()
                .map(|(v, in_a, in_b)| format!("{v:?} (A {in_a}, B {in_b})"))
                .collect();
            out.push(format!("{key}: {}", values.join(" vs ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::origin::Origin;

    fn side(values: &[(&str, &str)]) -> Side {
        let origin = Origin {
            device: 0,
            fields: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        Side {
            runs: vec![(
                PathBuf::from("x/run.txt"),
                Trace {
                    origins: vec![origin],
                    ..Trace::default()
                },
            )],
        }
    }

    #[test]
    fn headers_that_disagree_on_timing_are_named() {
        let a = side(&[
            ("driver_info", "Mesa 22.3.6"),
            ("host", "a"),
            ("format", "txt"),
        ]);
        let b = side(&[
            ("driver_info", "Mesa 25.0.7"),
            ("host", "b"),
            ("format", "json"),
        ]);
        assert_eq!(
            mismatches(&a, &b),
            ["driver_info: \"Mesa 22.3.6\" (A 1, B 0) vs \"Mesa 25.0.7\" (A 0, B 1)"],
            "the host and the format do not change what is timed"
        );
        assert!(mismatches(&a, &a).is_empty());
        let old = Side {
            runs: vec![(PathBuf::from("old.txt"), Trace::default())],
        };
        assert!(
            mismatches(&a, &old).is_empty(),
            "a trace without a header is not judged"
        );
    }
}
