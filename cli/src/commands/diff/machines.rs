//! `utrace diff A B` over a device lab: A and B are folders holding a folder per machine
//! (`A/<host>/run-01.txt`, ..., as each machine's `utrace bench` wrote them or Perfetto's
//! `traced` collected them), compared machine by machine: a diff each, one verdict line per
//! machine and one overall. A machine in one side only is said, not compared.

use std::path::{Path, PathBuf};

use super::{ci_formats, diff_paths, output, Args, Diff, Shown};

/// The machines both sides have (name, A's folder, B's folder), and those only one has.
pub struct Machines {
    pub both: Vec<(String, PathBuf, PathBuf)>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
}

/// The subfolders of `dir` when it holds folders and no trace of its own.
fn subfolders(dir: &Path) -> Result<Option<Vec<String>>, String> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                folders.push(name.to_string());
            }
        } else if path.is_file() && path.file_name().is_some_and(|n| n != "runs.json") {
            // A folder of runs (or of files beside the machines' folders) is not a lab.
            return Ok(None);
        }
    }
    folders.sort();
    Ok((!folders.is_empty()).then_some(folders))
}

/// A and B as machines, when both are folders of machines' folders.
pub fn paired(a: &Path, b: &Path) -> Result<Option<Machines>, String> {
    let (Some(in_a), Some(in_b)) = (subfolders(a)?, subfolders(b)?) else {
        return Ok(None);
    };
    let both = in_a
        .iter()
        .filter(|m| in_b.contains(m))
        .map(|m| (m.clone(), a.join(m), b.join(m)))
        .collect::<Vec<_>>();
    if both.is_empty() {
        return Err(format!(
            "{} and {} share no machine (folders {} against {})",
            a.display(),
            b.display(),
            in_a.join(", "),
            in_b.join(", ")
        ));
    }
    Ok(Some(Machines {
        only_a: in_a.into_iter().filter(|m| !b.join(m).is_dir()).collect(),
        only_b: in_b.into_iter().filter(|m| !a.join(m).is_dir()).collect(),
        both,
    }))
}

/// A machine's verdict in a line: HURT with its groups, or not.
fn verdict(name: &str, d: &Diff) -> String {
    if d.hurt.is_empty() {
        let helped = if d.helped.is_empty() {
            String::new()
        } else {
            format!(" ({} helped)", d.helped.len())
        };
        return format!("machine {name}: unchanged{helped}");
    }
    let groups: Vec<String> = d
        .hurt
        .iter()
        .map(|r| {
            format!(
                "{} {}%",
                r.key,
                r.change_pct.map_or("-".into(), output::pct)
            )
        })
        .collect();
    format!("machine {name}: HURT ({})", groups.join(", "))
}

/// Compares every machine both sides have and prints the diffs, a verdict per machine and
/// one overall; whether a machine got slower.
pub fn run(args: &Args, m: &Machines) -> Result<bool, String> {
    let mut diffs = Vec::new();
    for (name, a, b) in &m.both {
        let c = diff_paths(args, a, b).map_err(|e| format!("machine {name}: {e}"))?;
        diffs.push((name.as_str(), c.diff, c.preamble));
    }
    let hurt: Vec<&str> = diffs
        .iter()
        .filter(|(_, d, _)| !d.hurt.is_empty())
        .map(|(n, _, _)| *n)
        .collect();
    let overall = format!(
        "overall: {} of {} machines HURT{}",
        hurt.len(),
        diffs.len(),
        if hurt.is_empty() {
            String::new()
        } else {
            format!(" ({})", hurt.join(", "))
        }
    );
    let alone: Vec<String> = [("A", &m.only_a), ("B", &m.only_b)]
        .iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(side, list)| format!("only in {side}, not compared: {}\n", list.join(", ")))
        .collect();
    let shown = if args.json {
        let machines: Vec<serde_json::Value> = diffs
            .iter()
            .map(|(n, d, _)| serde_json::json!({"machine": n, "diff": output::json(d)}))
            .collect();
        format!(
            "{}\n",
            serde_json::json!({"machines": machines, "hurt_machines": hurt,
                "only_in_a": m.only_a, "only_in_b": m.only_b})
        )
    } else {
        match args.format {
            Shown::Junit => {
                let suites: Vec<(&str, &Diff)> = diffs.iter().map(|(n, d, _)| (*n, d)).collect();
                ci_formats::junit(&suites, args.threshold)
            }
            Shown::Markdown | Shown::Text => {
                let mut out = String::new();
                for (name, d, preamble) in &diffs {
                    if args.format == Shown::Markdown {
                        out.push_str(&format!("## machine {name}\n\n"));
                        out.push_str(&ci_formats::markdown(d, args.by, args.threshold, preamble));
                    } else {
                        out.push_str(&format!("== machine {name} ==\n{preamble}"));
                        out.push_str(&output::text(d, args.by, args.threshold));
                    }
                    out.push('\n');
                }
                for (name, d, _) in &diffs {
                    out.push_str(&verdict(name, d));
                    out.push('\n');
                }
                out.push_str(&alone.concat());
                out.push_str(&overall);
                out.push('\n');
                out
            }
        }
    };
    crate::stdout::print_text(&shown)?;
    Ok(!hurt.is_empty())
}
