//! `utrace run` and the signals that stop an application: Ctrl-C on a terminal (a real
//! pseudo-terminal made by `script`, whose line discipline signals the foreground group),
//! SIGINT to the process group, and SIGINT or SIGTERM to `utrace` alone. In every case
//! the application stops, `utrace` waits for it, prints the report of what was traced, and
//! exits with the application's status (128 + the signal that stopped it).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use utrace_tests::harness::{lavapipe_command, utrace_exe, TempDir};

const WORKLOAD: &str = env!("CARGO_BIN_EXE_utrace-workload");

/// The arguments of a run that lasts far longer than any test: 100,000 resubmissions, 5 ms
/// apart, traced to `trace.txt`.
fn long_run() -> Vec<String> {
    [
        "run",
        "--out",
        "trace.txt",
        "--",
        WORKLOAD,
        "--scenario",
        "resubmit",
        "--frames",
        "100000",
        "--pace-ms",
        "5",
    ]
    .map(String::from)
    .to_vec()
}

/// Waits until `trace` holds a few batches: the application is running and traced.
fn wait_for_batches(trace: &Path, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(trace).unwrap_or_default();
        if text.matches("BATCH ").count() >= 5 {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "utrace run ended before the signal"
        );
        assert!(
            Instant::now() < deadline,
            "no batches in {trace:?} within 60 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The report `utrace run` prints after the application stopped.
fn assert_reported(stdout: &str) {
    assert!(
        stdout.contains("cmd_buffer") && stdout.contains("fill_buffer"),
        "the report of what was traced: {stdout}"
    );
}

fn send(pid: i32, signal: libc::c_int) {
    // SAFETY: kill with a pid (or a negative process group) this test made.
    let sent = unsafe { libc::kill(pid, signal) };
    assert_eq!(sent, 0, "kill({pid}, {signal})");
}

/// SIGINT to the whole process group, as a terminal's Ctrl-C reaches it, and SIGINT or
/// SIGTERM to `utrace` alone, which it passes on.
#[test]
fn a_signal_stops_the_application_and_the_report_still_comes() {
    for (to_group, signal) in [
        (true, libc::SIGINT),
        (false, libc::SIGINT),
        (false, libc::SIGTERM),
    ] {
        let dir = TempDir::new("cli-run-signal");
        let mut child = lavapipe_command(&dir, &utrace_exe())
            .args(long_run())
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("utrace runs");
        wait_for_batches(&dir.path().join("trace.txt"), &mut child);
        let pid = child.id() as i32;
        send(if to_group { -pid } else { pid }, signal);
        let started = Instant::now();
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let what = format!(
            "signal {signal} to the {}",
            if to_group { "group" } else { "utrace process" }
        );
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{what}: ended in time"
        );
        assert_eq!(
            out.status.code(),
            Some(128 + signal),
            "{what}: the application's status: {stderr}"
        );
        assert!(stderr.contains("exited with signal"), "{what}: {stderr}");
        assert_reported(&stdout);
    }
}

/// A real Ctrl-C: `script` runs `utrace run` on a pseudo-terminal, and the ETX byte written
/// to its input makes the terminal signal the foreground group.
#[test]
fn ctrl_c_on_a_terminal_stops_the_application_and_the_report_still_comes() {
    let dir = TempDir::new("cli-run-ctrl-c");
    let line = format!("{} {}", utrace_exe().display(), long_run().join(" "));
    let mut child: Child = lavapipe_command(&dir, Path::new("script"))
        .args(["-qfec", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs");
    wait_for_batches(&dir.path().join("trace.txt"), &mut child);
    child.stdin.as_mut().unwrap().write_all(b"\x03").unwrap();
    let out = child.wait_with_output().unwrap();
    let seen = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(128 + libc::SIGINT), "{seen}");
    assert!(seen.contains("exited with signal"), "{seen}");
    assert_reported(&seen);
}
