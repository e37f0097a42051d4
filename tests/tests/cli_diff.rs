//! `utrace diff` on traces the layer wrote on Lavapipe of the `passes` scenario: a run with
//! one pass made ten times heavier is found HURT against the baseline and HELPED the other
//! way round, a trace against itself changes nothing, and bad input is an error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;
use utrace_tests::checks::assert_clean;
use utrace_tests::frame_passes::{DEFAULT_FRAMES, PASSES};
use utrace_tests::harness::{utrace_exe, TempDir};
use utrace_tests::workload;

/// The pass the heavy run makes ten times heavier.
const HEAVY: &str = "lighting";

/// Fresh pairs of runs tried before the comparison of two runs fails: see
/// [`a_heavier_pass_is_found_both_ways`].
const ATTEMPTS: usize = 3;

/// Held by each test while it runs workloads: two at once would slow each other down, and a
/// baseline run beside another test's run would seem slower than the heavy run after it.
static LAVAPIPE: Mutex<()> = Mutex::new(());

fn lavapipe() -> MutexGuard<'static, ()> {
    // A test that failed holding it leaves it poisoned; the runs are still one at a time.
    LAVAPIPE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `utrace` command of this build (scripts/test.sh builds it with the layer).
fn utrace() -> Command {
    Command::new(utrace_exe())
}

fn diff(a: &Path, b: &Path, args: &[&str]) -> Output {
    utrace()
        .arg("diff")
        .arg(a)
        .arg(b)
        .args(args)
        .output()
        .expect("utrace runs")
}

/// `diff --by label --json`: its exit status and object.
fn diff_json(a: &Path, b: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let out = diff(a, b, &[&["--by", "label", "--json"], args].concat());
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "one JSON object ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), v)
}

/// Runs the `passes` scenario (with `heavy` ten times heavier) into `dir/name`.
fn passes(dir: &TempDir, name: &str, format: &str, heavy: Option<&str>) -> PathBuf {
    passes_with(dir, name, format, heavy, &[])
}

/// [`passes`], with the variables `envs` set too.
fn passes_with(
    dir: &TempDir,
    name: &str,
    format: &str,
    heavy: Option<&str>,
    envs: &[(&str, &str)],
) -> PathBuf {
    let path = dir.path().join(name);
    let mut w = workload!("passes")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", path.to_str().expect("a UTF-8 path"))
        .env("GPU_TRACE_FORMAT", format)
        // Lavapipe's compute on its queue thread alone, no worker threads: a run then needs
        // one core of the two, and another process busy on the other slows it far less.
        .env("LP_NUM_THREADS", "0");
    if let Some(pass) = heavy {
        w = w.arg("--heavy-pass", pass).arg("--heavy-factor", "10");
    }
    for (k, v) in envs {
        w = w.env(k, v);
    }
    assert_clean(&w.run(dir));
    path
}

fn keys(v: &Value, section: &str) -> Vec<String> {
    v[section]
        .as_array()
        .unwrap_or_else(|| panic!("{section}: {v}"))
        .iter()
        .map(|r| r["key"].as_str().expect("a key").to_string())
        .collect()
}

fn row<'v>(v: &'v Value, section: &str, key: &str) -> Option<&'v Value> {
    v[section].as_array()?.iter().find(|r| r["key"] == key)
}

/// The checks on a baseline and a heavy run; `Err` says which failed.
fn check_pair(base: &Path, heavy: &Path) -> Result<(), String> {
    let (code, v) = diff_json(base, heavy, &[]);
    let hurt = row(&v, "hurt", HEAVY).ok_or_else(|| format!("{HEAVY} is not HURT: {v}"))?;
    let change = hurt["change_pct"].as_f64().unwrap_or_default();
    let frames = u64::from(DEFAULT_FRAMES);
    if change < 300.0
        || hurt["ci_low_pct"].as_f64().unwrap_or_default() <= 0.0
        || hurt["p_value"].as_f64().unwrap_or(1.0) >= 0.05
        || hurt["count_a"] != frames
        || hurt["count_b"] != frames
    {
        return Err(format!(
            "{HEAVY} should be +300% or more, significant: {hurt}"
        ));
    }
    if code != Some(1) {
        return Err(format!("exit status {code:?} with {HEAVY} HURT: {v}"));
    }
    // The other way round, with a threshold of 75%: the passes that did not change differ
    // between two runs by tens of percent on a machine shared with other work (beside two
    // busy loops, -53%: Lavapipe's queue thread, busier in the heavy run, loses more of its
    // core to them), while the heavy pass's change is -87% to -95% (a tenth of the work).
    let (code, v) = diff_json(heavy, base, &["--threshold", "75"]);
    if keys(&v, "helped") != [HEAVY] || !keys(&v, "hurt").is_empty() || code != Some(0) {
        return Err(format!(
            "heavy against base: {HEAVY} alone HELPED and exit status 0, not {code:?}: {v}"
        ));
    }
    let (unchanged, only_a, only_b) = (
        keys(&v, "unchanged"),
        keys(&v, "only_in_a"),
        keys(&v, "only_in_b"),
    );
    if unchanged.len() != PASSES.len() - 1 || !only_a.is_empty() || !only_b.is_empty() {
        return Err(format!("every other pass unchanged: {v}"));
    }
    // The table says the same.
    let out = diff(base, heavy, &["--by", "label"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let hurt_table = text.split("HELPED").next().unwrap_or_default();
    if out.status.code() != Some(1)
        || !text.starts_with("HURT: ")
        || !hurt_table
            .lines()
            .any(|l| l.starts_with(&format!("{HEAVY} ")))
    {
        return Err(format!("the table: {:?}\n{text}", out.status.code()));
    }
    Ok(())
}

/// A run with `lighting` ten times heavier against a baseline (txt against json, so the
/// formats differ) and back. Two runs differ by more than their work when the machine is
/// busy with something else during one of them: a pair that fails the checks is tried
/// again with fresh runs, up to [`ATTEMPTS`] times, and all attempts' failures are shown.
/// A broken diff fails every attempt.
#[test]
fn a_heavier_pass_is_found_both_ways() {
    let dir = TempDir::new("cli-diff");
    let _one_at_a_time = lavapipe();
    let mut failures = Vec::new();
    for attempt in 1..=ATTEMPTS {
        let base = passes(&dir, "base.txt", "txt", None);
        let heavy = passes(&dir, "heavy.json", "json", Some(HEAVY));
        match check_pair(&base, &heavy) {
            Ok(()) => return,
            Err(e) => {
                eprintln!("attempt {attempt}: {e}");
                failures.push(e);
            }
        }
    }
    panic!("every attempt failed:\n{}", failures.join("\n"));
}

#[test]
fn a_trace_against_itself_changes_nothing() {
    let dir = TempDir::new("cli-diff-self");
    let base = {
        let _one_at_a_time = lavapipe();
        passes(&dir, "base.txt", "txt", None)
    };
    let (code, v) = diff_json(&base, &base, &[]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["counters"], Value::Null, "traced without counters: {v}");
    assert!(
        keys(&v, "hurt").is_empty() && keys(&v, "helped").is_empty(),
        "{v}"
    );
    let mut unchanged = keys(&v, "unchanged");
    unchanged.sort();
    let mut want: Vec<String> = PASSES.iter().map(|p| p.to_string()).collect();
    want.sort();
    assert_eq!(unchanged, want, "{v}");
    for r in v["unchanged"].as_array().unwrap() {
        assert_eq!(r["change_pct"], 0.0, "{r}");
        assert_eq!(r["p_value"], 1.0, "{r}");
        assert!(r["ci_low_pct"].as_f64().unwrap() <= 0.0, "{r}");
        assert!(r["ci_high_pct"].as_f64().unwrap() >= 0.0, "{r}");
    }
    // By tracepoint, as a table: nothing changed either.
    let out = diff(&base, &base, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.starts_with("HURT: none\n\nHELPED: none\n\nunchanged: "),
        "{text}"
    );
}

/// With pipeline statistics in both traces, the heavy pass's dispatches are seen to be
/// ten times the work per label range (its compute invocations), the other passes' the
/// same; counters are counts, so one pair of runs decides (however the times came out).
#[test]
fn counters_say_which_pass_does_more_work() {
    let dir = TempDir::new("cli-diff-counters");
    let counters = [("GPU_TRACE_COUNTERS", "pipeline")];
    let (base, heavy) = {
        let _one_at_a_time = lavapipe();
        (
            passes_with(&dir, "base.txt", "txt", None, &counters),
            passes_with(&dir, "heavy.csv", "csv", Some(HEAVY), &counters),
        )
    };
    let (_, v) = diff_json(&base, &heavy, &[]);
    let c = &v["counters"];
    assert_eq!(c["groups"], PASSES.len(), "{c}");
    let changed = c["changed"].as_array().expect("a list");
    assert_eq!(changed.len(), 1, "{c}");
    assert_eq!(changed[0]["key"], HEAVY);
    assert_eq!(changed[0]["statistic"], "compute_invocations");
    let ratio =
        changed[0]["per_range_b"].as_f64().unwrap() / changed[0]["per_range_a"].as_f64().unwrap();
    assert_eq!(ratio, 10.0, "{c}");
    assert_eq!(changed[0]["change_pct"], 900.0);
    let out = diff(&base, &heavy, &["--by", "label"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "counters per range: changed in 1 of {} groups",
            PASSES.len()
        )),
        "{text}"
    );
    // Against itself: the statistics compared, nothing changed.
    let (_, v) = diff_json(&base, &base, &[]);
    assert_eq!(v["counters"]["changed"], serde_json::json!([]), "{v}");
    assert_eq!(v["counters"]["groups"], PASSES.len());
}

#[test]
fn bad_input_gets_one_line_and_status_2() {
    let dir = TempDir::new("cli-diff-bad");
    let missing = dir.path().join("missing.txt");
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    for (a, b, says) in [
        (&missing, &empty, "missing.txt"),
        (&empty, &missing, "empty.txt"),
    ] {
        let out = diff(a, b, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("utrace: ") && err.contains(says), "{err}");
        assert!(out.stdout.is_empty());
    }
    let out = diff(&missing, &missing, &["--threshold", "-3"]);
    assert_eq!(out.status.code(), Some(2), "a threshold below 0");
}
