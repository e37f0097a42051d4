//! Golden outputs of the regression gate (issue 46): `utrace diff` of two folders of runs
//! generated with fixed seeds, as text, Markdown, JUnit and JSON, their folders' paths
//! masked; and the header the layer writes on this machine kind's Lavapipe, its build, pid,
//! host and time masked. Compared byte for byte with `tests/golden/`;
//! `UPDATE_GOLDEN=1 cargo test -p utrace-tests --test golden_outputs` writes them again
//! (review the diff).

use std::path::{Path, PathBuf};
use std::process::Command;

use utrace_tests::checks::assert_clean;
use utrace_tests::harness::{utrace_exe, TempDir};
use utrace_tests::synthetic_runs::{write_side, Side};
use utrace_tests::workload;

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(name)
}

/// `got` against the golden file `name` (or written to it with `UPDATE_GOLDEN`).
fn check(name: &str, got: &str) {
    let path = golden(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        got == want,
        "{name} differs from its golden file (UPDATE_GOLDEN=1 to rewrite); got:\n{got}"
    );
}

#[test]
fn diff_outputs_over_runs_match_their_golden_files() {
    let dir = TempDir::new("golden-diff");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let side = |seed, changed| Side {
        runs: 10,
        seed,
        changed,
        driver_info: "Synthetic 1.0",
    };
    write_side(&a, &side(1, None));
    write_side(&b, &side(2, Some(("lighting", 1.10))));
    for (args, name) in [
        (&[][..], "diff-runs.txt"),
        (&["--format", "markdown"][..], "diff-runs.md"),
        (&["--format", "junit"][..], "diff-runs.xml"),
        (&["--json"][..], "diff-runs.json"),
    ] {
        let out = Command::new(utrace_exe())
            .arg("diff")
            .arg(&a)
            .arg(&b)
            .args(["--by", "label"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout)
            .unwrap()
            .replace(&dir.path().display().to_string(), "<DIR>");
        check(name, &text);
    }
}

/// `key="value"` (or `key=value`) in `line` with its value replaced by `mask`.
fn masked(line: &str, key: &str, mask: &str) -> String {
    let Some(at) = line.find(&format!("{key}=")) else {
        return line.to_string();
    };
    let start = at + key.len() + 1;
    let rest = &line[start..];
    let end = match rest.strip_prefix('"') {
        Some(quoted) => quoted.find('"').map_or(rest.len(), |e| e + 2),
        None => rest.find(", ").unwrap_or(rest.len()),
    };
    format!("{}{mask}{}", &line[..start], &line[start + end..])
}

#[test]
fn the_header_on_lavapipe_matches_its_golden_file() {
    let dir = TempDir::new("golden-header");
    let path = dir.path().join("t.txt");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", path.to_str().unwrap())
        .env("GPU_TRACEPOINTS", "-dispatch")
        .run(&dir);
    assert_clean(&run);
    let text = std::fs::read_to_string(&path).unwrap();
    let header: String = text
        .lines()
        .filter(|l| l.starts_with("TRACE "))
        .map(|l| {
            let l = masked(l, "utrace", "\"<VERSION>\"");
            let l = masked(&l, "pid", "<PID>");
            let l = masked(&l, "host", "\"<HOST>\"");
            masked(&l, "started", "\"<TIME>\"") + "\n"
        })
        .collect();
    check("header-lavapipe-22.3.txt", &header);
}
