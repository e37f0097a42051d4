//! `utrace diff A B`: which groups of ranges got slower (HURT) or faster (HELPED) from trace
//! A to trace B, by the change of their median duration, when that change passes a
//! threshold and is significant (Mann–Whitney p < 0.05 and a 95% bootstrap interval of the
//! change that excludes 0). Where the traces have pipeline statistics, each group's
//! statistics per range are compared beside the times. A and B may be folders of runs
//! ([`runs`]): the runs are then the samples. Traces whose headers disagree on what changes
//! the timing are refused (`--allow-mismatch` compares them anyway).

mod ci_formats;
mod counters;
mod machines;
mod output;
pub mod runs;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::analysis::exact_rank::{rank_test, ratio_change};
use crate::analysis::groups::{key, By};
use crate::analysis::ranges;
use crate::analysis::significance::{change_pct, mann_whitney, median, median_change_ci, seed};

/// The significance level of the Mann–Whitney test.
const ALPHA: f64 = 0.05;

/// `utrace diff`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The baseline: a trace (txt, json, csv or Perfetto), or a folder of traces, one per
    /// run (`utrace bench --out DIR`).
    pub a: PathBuf,
    /// What is compared with it: a trace, or a folder of runs.
    pub b: PathBuf,
    /// With folders of runs, the value each run gives a group: its median duration, or its
    /// total duration per frame.
    #[arg(long, value_enum, default_value = "median")]
    pub stat: runs::Stat,
    /// Compare traces whose headers disagree on what changes the timing (device, driver,
    /// tracepoints, counters, frames), saying how above the table.
    #[arg(long)]
    pub allow_mismatch: bool,
    /// What ranges are grouped by.
    #[arg(long, value_enum, default_value = "tracepoint")]
    pub by: By,
    /// A group's median must change by more than PCT percent (and significantly) to count
    /// as HURT or HELPED; smaller changes are within the noise of GPU timing.
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = threshold)]
    pub threshold: f64,
    /// One JSON object instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// The tables as text, a Markdown table for a CI job's summary, or a JUnit report (a
    /// test case per group; a HURT group fails).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Shown,
}

/// How the diff is shown (`--json` is the JSON object, whatever this says).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Shown {
    Text,
    Markdown,
    Junit,
}

fn threshold(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{text:?} is not a percentage (a number ≥ 0)")),
    }
}

/// One group in both traces, or in one of them (the other side's count 0, median `None`).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub key: String,
    pub count_a: usize,
    pub count_b: usize,
    pub median_a_ns: Option<f64>,
    pub median_b_ns: Option<f64>,
    /// The change of the median from A to B, in percent (infinite from a median of 0).
    pub change_pct: Option<f64>,
    /// The 95% bootstrap interval of `change_pct`.
    pub ci_pct: Option<(f64, f64)>,
    /// Mann–Whitney's two-sided p; `None` when a side is too small for the test.
    pub p_value: Option<f64>,
}

#[derive(Debug, Default)]
pub struct Diff {
    /// Slower, most first.
    pub hurt: Vec<Row>,
    /// Faster, most first.
    pub helped: Vec<Row>,
    pub unchanged: Vec<Row>,
    pub only_in_a: Vec<Row>,
    pub only_in_b: Vec<Row>,
    /// The groups' pipeline statistics compared; `None` when neither trace has them.
    pub counters: Option<counters::CounterDiff>,
}

/// Runs the command: prints the diff; `Ok(true)` when something got slower (HURT).
pub fn run(args: &Args) -> Result<bool, String> {
    if let Some(machines) = machines::paired(&args.a, &args.b)? {
        return machines::run(args, &machines);
    }
    print(&diff_paths(args, &args.a, &args.b)?, args)
}

/// A comparison of two traces or folders of runs.
struct Compared {
    diff: Diff,
    /// Where the headers disagree (compared anyway, as asked).
    mismatches: Vec<String>,
    /// The runs a side, when the sides are runs.
    runs: Option<(usize, usize)>,
    /// What the text says above the tables: the mismatches, the runs.
    preamble: String,
}

/// The diff of `a` and `b` (traces or folders of runs).
fn diff_paths(
    args: &Args,
    a_path: &std::path::Path,
    b_path: &std::path::Path,
) -> Result<Compared, String> {
    let (side_a, side_b) = (runs::load_side(a_path)?, runs::load_side(b_path)?);
    let mismatched = runs::mismatches(&side_a, &side_b);
    if !mismatched.is_empty() && !args.allow_mismatch {
        return Err(format!(
            "the traces differ in what changes the timing, so their times are not comparable \
             (--allow-mismatch compares them anyway):\n  {}",
            mismatched.join("\n  ")
        ));
    }
    let mut preamble: String = mismatched
        .iter()
        .map(|m| format!("mismatch (compared anyway): {m}\n"))
        .collect();
    if a_path.is_dir() || b_path.is_dir() {
        let d = compare_with(
            runs::run_values(&side_a, args.by, args.stat),
            runs::run_values(&side_b, args.by, args.stat),
            args.threshold,
            |a, b, _| {
                let p = rank_test(a, b);
                match ratio_change(a, b) {
                    Some((change, ci)) => (p, Some(change), Some(ci)),
                    None => (p, None, None),
                }
            },
        );
        preamble.push_str(&format!(
            "runs: A {} ({}), B {} ({}); compared: {}\n\n",
            side_a.runs.len(),
            a_path.display(),
            side_b.runs.len(),
            b_path.display(),
            args.stat.said()
        ));
        return Ok(Compared {
            diff: d,
            mismatches: mismatched,
            runs: Some((side_a.runs.len(), side_b.runs.len())),
            preamble,
        });
    }
    let (a, b) = (&side_a.runs[0].1, &side_b.runs[0].1);
    let spec = ranges::Spec::built_in();
    let (paired_a, paired_b) = (ranges::pair(a, &spec), ranges::pair(b, &spec));
    let mut d = compare(
        durations(&paired_a, args.by),
        durations(&paired_b, args.by),
        args.threshold,
    );
    // A trace has one kind of counters: pipeline statistics unless it has hardware ones
    // (whose unmeasured ranges also say `partial=1`).
    let hardware_a = crate::analysis::hardware_counters::rows(&paired_a, args.by);
    let hardware_b = crate::analysis::hardware_counters::rows(&paired_b, args.by);
    let statistics = |paired, hardware: &(Vec<String>, _)| {
        if hardware.0.is_empty() {
            crate::analysis::counters::rows(paired, args.by)
        } else {
            Vec::new()
        }
    };
    d.counters = counters::compare(
        &statistics(&paired_a, &hardware_a),
        &statistics(&paired_b, &hardware_b),
    )
    .or_else(|| counters::compare_hardware(&hardware_a, &hardware_b));
    Ok(Compared {
        diff: d,
        mismatches: mismatched,
        runs: None,
        preamble,
    })
}

/// Prints the comparison; whether something got slower.
fn print(c: &Compared, args: &Args) -> Result<bool, String> {
    let (d, preamble) = (&c.diff, c.preamble.as_str());
    if args.json {
        let mut value = output::json(d);
        if let Some((a, b)) = c.runs {
            value["runs"] = serde_json::json!({"a": a, "b": b, "stat": args.stat.said()});
        }
        value["mismatches"] = serde_json::json!(c.mismatches);
        crate::stdout::print(&format!("{value}\n"))?;
    } else {
        let shown = match args.format {
            Shown::Text => format!("{preamble}{}", output::text(d, args.by, args.threshold)),
            Shown::Markdown => ci_formats::markdown(d, args.by, args.threshold, preamble),
            Shown::Junit => ci_formats::junit(&[("utrace diff", d)], args.threshold),
        };
        crate::stdout::print_text(&shown)?;
    }
    Ok(!d.hurt.is_empty())
}

/// The durations of each group's ranges.
pub fn durations(paired: &ranges::Paired<'_>, by: By) -> BTreeMap<String, Vec<u64>> {
    let mut groups: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for r in &paired.ranges {
        if let Some(k) = key(r, by) {
            groups.entry(k).or_default().push(r.duration());
        }
    }
    groups
}

/// Compares each group's durations in A and B and sorts the groups into the diff's lists.
pub fn compare(
    a: BTreeMap<String, Vec<u64>>,
    b: BTreeMap<String, Vec<u64>>,
    threshold: f64,
) -> Diff {
    compare_with(a, b, threshold, |da, db, k| {
        (
            mann_whitney(da, db),
            None,
            median_change_ci(da, db, seed(k)),
        )
    })
}

/// What a comparison of one group's values finds: the test's p, the change in percent
/// (`None`: the change of the medians) and its 95% interval.
type Found = (Option<f64>, Option<f64>, Option<(f64, f64)>);

/// [`compare`] with the statistics given (runs are few: their test is exact, their change
/// the Hodges–Lehmann ratio with the test's interval).
pub fn compare_with(
    mut a: BTreeMap<String, Vec<u64>>,
    mut b: BTreeMap<String, Vec<u64>>,
    threshold: f64,
    stats: impl Fn(&[u64], &[u64], &str) -> Found,
) -> Diff {
    let mut d = Diff::default();
    let common: Vec<String> = a.keys().filter(|k| b.contains_key(*k)).cloned().collect();
    for k in common {
        let mut da = a.remove(&k).unwrap_or_default();
        let mut db = b.remove(&k).unwrap_or_default();
        let (p_value, change, ci_pct) = stats(&da, &db, &k);
        let (ma, mb) = (median(&mut da), median(&mut db));
        let change = change.unwrap_or_else(|| change_pct(ma, mb));
        let row = Row {
            key: k,
            count_a: da.len(),
            count_b: db.len(),
            median_a_ns: Some(ma),
            median_b_ns: Some(mb),
            change_pct: Some(change),
            ci_pct,
            p_value,
        };
        let significant = p_value.is_some_and(|p| p < ALPHA);
        let (low, high) = ci_pct.unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
        if significant && change > threshold && low > 0.0 {
            d.hurt.push(row);
        } else if significant && change < -threshold && high < 0.0 {
            d.helped.push(row);
        } else {
            d.unchanged.push(row);
        }
    }
    let alone = |(k, mut v): (String, Vec<u64>), in_a: bool| {
        let m = Some(median(&mut v));
        Row {
            key: k,
            count_a: if in_a { v.len() } else { 0 },
            count_b: if in_a { 0 } else { v.len() },
            median_a_ns: if in_a { m } else { None },
            median_b_ns: if in_a { None } else { m },
            change_pct: None,
            ci_pct: None,
            p_value: None,
        }
    };
    d.only_in_a = a.into_iter().map(|g| alone(g, true)).collect();
    d.only_in_b = b.into_iter().map(|g| alone(g, false)).collect();
    let by_change = |r: &Row| r.change_pct.unwrap_or(0.0);
    d.hurt.sort_by(|x, y| {
        by_change(y)
            .total_cmp(&by_change(x))
            .then(x.key.cmp(&y.key))
    });
    d.helped.sort_by(|x, y| {
        by_change(x)
            .total_cmp(&by_change(y))
            .then(x.key.cmp(&y.key))
    });
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` durations around `center` (±5%), the same spread for every center.
    pub(super) fn around(center: u64, n: u64) -> Vec<u64> {
        (0..n)
            .map(|i| center + center * ((i * 37) % 11) / 100)
            .collect()
    }

    pub(super) fn groups(list: &[(&str, Vec<u64>)]) -> BTreeMap<String, Vec<u64>> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    pub(super) fn keys(rows: &[Row]) -> Vec<&str> {
        rows.iter().map(|r| r.key.as_str()).collect()
    }

    #[test]
    fn groups_are_sorted_into_hurt_helped_and_unchanged() {
        let a = groups(&[
            ("slow", around(1000, 20)),
            ("slower", around(1000, 20)),
            ("fast", around(1000, 20)),
            ("same", around(1000, 20)),
            ("few", around(1000, 3)),
            ("small", around(1000, 200)),
            ("gone", around(5, 2)),
        ]);
        let b = groups(&[
            ("slow", around(2000, 25)),
            ("slower", around(10_000, 20)),
            ("fast", around(500, 20)),
            ("same", around(1000, 20)),
            ("few", around(9000, 3)),
            ("small", around(1030, 200)),
            ("new", around(7, 1)),
        ]);
        let d = compare(a, b, 5.0);
        assert_eq!(keys(&d.hurt), ["slower", "slow"], "most first");
        assert_eq!(keys(&d.helped), ["fast"]);
        assert_eq!(keys(&d.unchanged), ["few", "same", "small"]);
        assert_eq!(
            (keys(&d.only_in_a), keys(&d.only_in_b)),
            (vec!["gone"], vec!["new"])
        );
        let slow = &d.hurt[1];
        assert_eq!((slow.count_a, slow.count_b), (20, 25));
        assert!((slow.change_pct.unwrap() - 100.0).abs() < 1.0, "{slow:?}");
        let (low, high) = slow.ci_pct.unwrap();
        assert!(low > 0.0 && low <= 100.0 && 100.0 <= high, "{slow:?}");
        assert!(slow.p_value.unwrap() < 0.001);
        let same = &d.unchanged[1];
        assert_eq!((same.change_pct, same.p_value), (Some(0.0), Some(1.0)));
        // "few" changed 9-fold but is too small to test; "small" (+3%) is significant but
        // below the threshold.
        assert_eq!(d.unchanged[0].p_value, None);
        assert!(
            d.unchanged[2].p_value.unwrap() < 0.05,
            "{:?}",
            d.unchanged[2]
        );
        // A threshold of 1% makes it a slowdown.
        let d = compare(
            groups(&[("small", around(1000, 200))]),
            groups(&[("small", around(1030, 200))]),
            1.0,
        );
        assert_eq!(keys(&d.hurt), ["small"]);
    }

    #[test]
    fn thresholds_must_be_percentages() {
        assert_eq!(threshold("12.5"), Ok(12.5));
        assert!(threshold("-1").is_err() && threshold("nan").is_err() && threshold("x").is_err());
    }
}
