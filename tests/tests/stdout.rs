//! The trace on stdout beside the application's own output: both keep their lines whole,
//! and a reader that goes away does not take the application with it.

use std::io::BufRead;

use utrace_tests::chatter::PREFIX;
use utrace_tests::checks::{assert_clean, assert_trace_matches, said};
use utrace_tests::harness::TempDir;
use utrace_tests::workload;

#[test]
fn the_applications_lines_and_the_trace_stay_whole_on_one_stdout() {
    // The workload prints a line after each of its 300 submissions through C's stdout
    // stream (fully buffered into the pipe, as vulkaninfo's output is); the trace goes to
    // stdout too.
    let dir = TempDir::new("chatter");
    let run = workload!("idle-waits")
        .arg("--chatter", "")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE", "1")
        .run(&dir);
    assert_clean(&run);
    let mut chatter = 0;
    let mut trace = String::new();
    for line in run.stdout.lines() {
        if line.starts_with(PREFIX) {
            chatter += 1;
            let expected = format!(
                "{PREFIX}{chatter} done, and this line is long enough to straddle buffer boundaries"
            );
            assert_eq!(line, expected, "an application line stays whole");
        } else {
            trace.push_str(line);
            trace.push('\n');
        }
    }
    assert_eq!(chatter, 300, "every application line is there");
    // Every other line belongs to the trace, whole: it parses and matches the submissions.
    let trace = assert_trace_matches(&trace, &run);
    assert_eq!(trace.batches.len(), 300);
    assert_eq!(trace.ends.len(), 1);
}

#[test]
fn a_reader_that_goes_away_does_not_kill_the_application() {
    // `GPU_TRACE=1 app | head -6`: the four header lines, the first batch's two.
    let dir = TempDir::new("head");
    let run = workload!("idle-waits")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE", "1")
        .run_reading_stdout(
            &dir,
            Box::new(|out| {
                let lines: Vec<String> = std::io::BufReader::new(out)
                    .lines()
                    .take(6)
                    .map_while(Result::ok)
                    .collect();
                (lines.join("\n") + "\n").into_bytes()
            }),
        );
    assert!(
        run.success,
        "the application ended (signal {:?}, code {:?}): {}",
        run.signal, run.code, run.stderr
    );
    assert!(run.report().devices[0].results_ok);
    assert_eq!(run.stdout.lines().count(), 6);
    assert!(
        run.stdout.starts_with("TRACE ORIGIN: device=0")
            && run
                .stdout
                .lines()
                .nth(4)
                .is_some_and(|l| l.starts_with("BATCH 1: device=0")),
        "{}",
        run.stdout
    );
    let said = said(&run);
    assert_eq!(said.len(), 1, "one message: {}", run.stderr);
    assert!(
        said[0].contains("went away") && said[0].contains("stdout"),
        "{}",
        said[0]
    );
}
