//! The regression gate's CI recipe: a GFXReconstruct capture of the workload, replayed
//! with `gfxrecon-replay` under `utrace bench`, the folders compared by `utrace diff`
//! (docs/command.md). Here its plumbing: the capture replays traced, each run's trace has
//! the work the application recorded (the same ranges, the same labels) and a header that
//! names the replayer and the captured application; two folders of replays compare. The
//! verdicts on timing are the live check's (scripts/regression-gate.sh), not a test's.

use std::path::Path;
use std::process::Command;

use utrace_tests::harness::{lavapipe_command, utrace_exe, TempDir};

const WORKLOAD: &str = env!("CARGO_BIN_EXE_utrace-workload");

/// The labels of a txt trace, in order.
fn labels(trace: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(trace).unwrap();
    let parsed = utrace_tests::checks::parse(&text);
    parsed
        .batches
        .iter()
        .flat_map(|b| &b.events)
        .filter(|e| e.name == "begin_label")
        .map(|e| e.arg("label").unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_capture_replays_under_bench_with_the_applications_work_and_compares() {
    let dir = TempDir::new("replay");
    let capture = dir.path().join("passes.gfxr");
    // The capture, with GFXReconstruct's layer (Debian's gfxreconstruct).
    let out = lavapipe_command(&dir, Path::new(WORKLOAD))
        .args(["--scenario", "passes", "--frames", "4"])
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_LUNARG_gfxreconstruct")
        .env("GFXRECON_CAPTURE_FILE", &capture)
        .env("GFXRECON_CAPTURE_FILE_TIMESTAMP", "false")
        .output()
        .expect("the workload runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        capture.is_file(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The application traced directly, for what its replays must show.
    let direct = dir.path().join("direct.txt");
    let out = lavapipe_command(&dir, &utrace_exe())
        .arg("run")
        .arg("--out")
        .arg(&direct)
        .args(["--", WORKLOAD, "--scenario", "passes", "--frames", "4"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    for side in ["a", "b"] {
        let folder = dir.path().join(side);
        let out = lavapipe_command(&dir, &utrace_exe())
            .args(["bench", "--runs", "2", "--out"])
            .arg(&folder)
            .args(["--", "gfxrecon-replay"])
            .arg(&capture)
            .output()
            .expect("utrace bench runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for run in ["run-01.txt", "run-02.txt"] {
            let trace = folder.join(run);
            assert_eq!(
                labels(&trace),
                labels(&direct),
                "{side}/{run}: the same passes"
            );
            let text = std::fs::read_to_string(&trace).unwrap();
            let parsed = utrace_tests::checks::parse(&text);
            assert_eq!(parsed.header(0, "process"), Some("gfxrecon-replay"));
            assert_eq!(parsed.header(0, "app_name"), Some("utrace-workload"));
        }
    }
    // The two folders compare (their headers agree on what is timed): a verdict, not an
    // error, whatever the timing says.
    let out = Command::new(utrace_exe())
        .arg("diff")
        .arg(dir.path().join("a"))
        .arg(dir.path().join("b"))
        .args(["--by", "label", "--format", "junit"])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let junit = String::from_utf8(out.stdout).unwrap();
    assert!(junit.contains("tests=\"3\""), "{junit}");
}
