//! `GPU_TRACEFILE=/dev/stdout` and `/dev/stderr` (issue 43, defect 7): the trace goes
//! through the descriptor the application already has, so a redirection to a file, with
//! `>` or `>>`, keeps what the application and the shell wrote there, and the trace lands
//! whole between their lines. (Before, the layer opened the path anew: it truncated the
//! file, and wrote from its start over the application's lines.)

use std::path::Path;

use utrace_tests::checks::parse;
use utrace_tests::harness::{run_application, TempDir};

const DRAWS: u64 = 10;

/// `many-draws` of [`DRAWS`] with its trace to `stream`, run by a shell that writes a
/// line to `stream` before and after it, `redirect`ed (`>>` or `>`) to `file`, which held
/// a line already.
fn traced_between_lines(dir: &TempDir, stream: &str, redirect: &str, file: &Path) {
    std::fs::write(file, "old line\n").unwrap();
    let fd = if stream == "stdout" { "1" } else { "2" };
    let script = format!(
        "exec {fd}{redirect}'{file}'; echo app-before >&{fd}; '{exe}' --scenario many-draws --draws {DRAWS}; echo app-after >&{fd}",
        file = file.display(),
        exe = env!("CARGO_BIN_EXE_utrace-workload"),
    );
    let out = run_application(
        dir,
        "/bin/sh",
        &["-c", &script],
        "VK_LAYER_utrace",
        &[
            ("GPU_TRACE", "1"),
            ("GPU_TRACEFILE", &format!("/dev/{stream}")),
        ],
    );
    assert!(
        out.status.success(),
        "{stream} {redirect}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_trace_to_a_redirected_standard_stream_keeps_every_line_of_the_applications() {
    for stream in ["stdout", "stderr"] {
        for redirect in [">>", ">"] {
            let dir = TempDir::new("standard-streams");
            let file = dir.path().join("f");
            traced_between_lines(&dir, stream, redirect, &file);
            let text = std::fs::read_to_string(&file).unwrap();
            let kept = if redirect == ">>" { "old line\n" } else { "" };
            let head = format!("{kept}app-before\n");
            let trace = text
                .strip_prefix(&head)
                .and_then(|t| t.strip_suffix("app-after\n"))
                .unwrap_or_else(|| {
                    panic!("{stream} {redirect}: the lines around the trace:\n{text}")
                });
            let trace = parse(trace);
            let end = &trace.ends[0];
            assert_eq!(
                (end.events, end.dropped),
                (2 * DRAWS + 8, 0),
                "{stream} {redirect}: {end:?}"
            );
        }
    }
}
