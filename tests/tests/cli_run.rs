//! `utrace run`: the workload run under the layer found beside the `utrace` binary (no
//! manifest installed, no variable set), its report printed, its exit status kept; the
//! live line on a terminal; and the mistakes a user can make.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use utrace_tests::harness::{lavapipe_command, read_report, utrace_exe, TempDir};

fn utrace() -> PathBuf {
    utrace_exe()
}

const WORKLOAD: &str = env!("CARGO_BIN_EXE_utrace-workload");

/// `utrace run ARGS -- utrace-workload --scenario demo ...` with validation beneath the
/// layer (the workload enables it itself).
fn run_demo(dir: &TempDir, utrace_args: &[&str]) -> Output {
    let report = dir.path().join("report.json");
    lavapipe_command(dir, &utrace())
        .arg("run")
        .args(utrace_args)
        .args(["--", WORKLOAD, "--scenario", "demo", "--layers"])
        .arg("VK_LAYER_KHRONOS_validation")
        .arg("--report")
        .arg(&report)
        .output()
        .expect("utrace runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn run_traces_the_application_and_prints_its_report() {
    let dir = TempDir::new("cli-run");
    let trace = dir.path().join("demo.json");
    let out = run_demo(
        &dir,
        &["--out", "demo.json", "--format", "json", "--top", "3"],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let report = read_report(&dir.path().join("report.json")).unwrap();
    // The loader's own notice that VK_INSTANCE_LAYERS added a layer reaches the workload's
    // messenger too; it is not validation's.
    let validation: Vec<&String> = report
        .validation_messages
        .iter()
        .filter(|m| !m.contains("env var 'VK_INSTANCE_LAYERS' defined"))
        .collect();
    assert!(validation.is_empty(), "{validation:?}");
    assert!(report.devices.iter().all(|d| d.results_ok));
    // The relative --out is where utrace was run, and the printed report is that trace's.
    assert!(trace.is_file(), "{stderr}");
    assert!(
        stderr.contains(&format!("trace: {}", "demo.json")),
        "{stderr}"
    );
    let again = Command::new(utrace())
        .args(["report", "--top", "3"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(stdout.ends_with(&text(&again.stdout)), "{stdout}");
    assert!(stdout.contains("cmd_buffer"), "{stdout}");
    // Not a terminal: no live line.
    assert!(!stderr.contains("tracing:"), "{stderr}");
}

/// A trace with GPU counters, however they were asked for (`GPU_TRACE_COUNTERS`, the
/// setting's `VK_UTRACE_COUNTERS`), gets the counters table in the report (the demo draws
/// and dispatches); one without them gets no table and no note about it.
#[test]
fn run_with_counters_reports_them() {
    for (variable, counted) in [
        ("GPU_TRACE_COUNTERS", true),
        ("VK_UTRACE_COUNTERS", true),
        ("UTRACE_NOTHING", false),
    ] {
        let dir = TempDir::new("cli-run-counters");
        let report = dir.path().join("report.json");
        let out = lavapipe_command(&dir, &utrace())
            .env(variable, "pipeline")
            .args(["run", "--out", "demo.txt", "--"])
            .args([WORKLOAD, "--scenario", "demo", "--report"])
            .arg(&report)
            .output()
            .expect("utrace runs");
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(
            stdout.contains("\npipeline statistics\n"),
            counted,
            "{variable}: {stdout}"
        );
        assert!(!stdout.contains("no pipeline statistics"), "{stdout}");
    }
}

#[test]
fn the_traces_format_follows_its_name() {
    // `--out x.pftrace` without `--format` is a Perfetto trace, as GPU_TRACEFILE's name
    // says the format to the layer (it was a text trace under that name).
    let dir = TempDir::new("cli-run-named");
    let out = run_demo(&dir, &["--out", "demo.pftrace"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(dir.path().join("demo.pftrace")).unwrap();
    assert_eq!(
        bytes.first(),
        Some(&0x0a),
        "a Perfetto trace: its first packet"
    );
    assert!(
        text(&out.stdout).contains("cmd_buffer"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn the_applications_exit_status_is_kept() {
    let dir = TempDir::new("cli-run-status");
    // Applications that make no device, so write no trace (said on stderr): their status
    // is the command's, 128 + N for one killed by signal N, as a shell reports it.
    for (app, code) in [
        (&[WORKLOAD, "--no-such-option"][..], 2),
        (&["/bin/false"][..], 1),
        (&["/bin/sh", "-c", "exit 7"][..], 7),
        (&["/bin/sh", "-c", "kill -SEGV $$"][..], 139),
    ] {
        let out = lavapipe_command(&dir, &utrace())
            .arg("run")
            .arg("--")
            .args(app)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{app:?}: {err}");
        assert!(err.contains("wrote no trace"), "{app:?}: {err}");
    }
}

#[test]
fn mistakes_get_one_line_and_a_failure() {
    let dir = TempDir::new("cli-run-bad");
    for (args, says) in [
        (
            &["run", "--", "/no/such/app"][..],
            "cannot run /no/such/app",
        ),
        (&["run", "--frames", "9-2", "--", "true"][..], "FIRST-LAST"),
        (&["run", "--format", "xml", "--", "true"][..], "xml"),
        (
            &["run", "--out", "x.pftrace", "--format", "txt", "--", "true"][..],
            "names a perfetto trace",
        ),
    ] {
        let out = lavapipe_command(&dir, &utrace())
            .args(args)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(
            err.lines().next().unwrap().contains(says),
            "{args:?}: {err}"
        );
    }
    let out = lavapipe_command(&dir, &utrace())
        .arg("run")
        .output()
        .unwrap();
    assert!(!out.status.success(), "no application");
}

/// On a terminal (a pseudo-terminal made by `script`), a live line says what was traced.
#[test]
fn a_terminal_gets_a_live_line() {
    let dir = TempDir::new("cli-run-tty");
    let report = dir.path().join("report.json");
    let line = format!(
        "{} run --out t.txt -- {WORKLOAD} --scenario demo --report {}",
        utrace().display(),
        report.display()
    );
    let out = lavapipe_command(&dir, Path::new("script"))
        .args(["-qec", &line, "/dev/null"])
        .output()
        .expect("script (util-linux) runs");
    let seen = text(&out.stdout);
    assert!(out.status.success(), "{seen}");
    assert!(
        seen.contains("tracing:") && seen.contains("events"),
        "{seen}"
    );
    assert!(seen.contains("cmd_buffer"), "the report follows: {seen}");
}
