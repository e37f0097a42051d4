//! On demand through the system backend: the layer loaded with no tracing variable
//! registers with a tracing service (`utrace-mini-traced`, the tests' traced), and a
//! session started and stopped while the application runs (`utrace-perfetto-record`)
//! captures what it should.

use std::collections::BTreeSet;

use utrace_tests::checks::assert_clean;
use utrace_tests::harness::{time_factor, Run, TempDir};
use utrace_tests::perfetto_trace::{self, Resolved};
use utrace_tests::system_tracing::{MiniTraced, Recording};
use utrace_tests::vk::boottime_ns;
use utrace_tests::workload;

/// Frames of the headless demo (about 1 ms each): long enough to start and stop a
/// session in the middle.
const FRAMES: &str = "4000";

/// Runs the headless demo under the layer with no tracing variable, and records a session
/// from 200 ms after its first frame completed (its start-up done, however long that took)
/// for about 1 s. Returns the run, the trace and the session's
/// CPU window (BOOTTIME: just before it was asked to start, once its trace was written).
fn session_in_the_middle(extra: &[(&str, &str)]) -> (Run, Resolved, u64, u64) {
    let dir = TempDir::new("system");
    let service = MiniTraced::start(dir.path());
    let out = dir.path().join("session.pftrace");
    let ready = dir.path().join("ready");
    let mut w = workload!("demo")
        .arg("--frames", FRAMES)
        .arg("--ready-file", ready.to_str().unwrap())
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env(
            "PERFETTO_PRODUCER_SOCK_NAME",
            service.producer_socket.to_str().unwrap(),
        )
        .env("UTRACE_LOG", "info");
    for (k, v) in extra {
        w = w.env(k, v);
    }
    let (run, window) = std::thread::scope(|s| {
        let app = s.spawn(|| w.run(&dir));
        // Natively; under valgrind (scripts/valgrind-tests.sh) each scaled by its factor.
        let scaled = |ms: u64| std::time::Duration::from_millis(ms * u64::from(time_factor()));
        let deadline = std::time::Instant::now() + scaled(60_000);
        while !ready.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(ready.exists(), "the demo's first frame did not complete");
        std::thread::sleep(scaled(200));
        let start = boottime_ns();
        let recording = Recording::start(&service, &out);
        std::thread::sleep(scaled(1000));
        recording.stop();
        let end = boottime_ns();
        (app.join().expect("the workload thread"), (start, end))
    });
    // Sessions starting and stopping mid-run leave validation silent.
    assert_clean(&run);
    assert!(run.stdout.is_empty(), "nothing on stdout: {}", run.stdout);
    let trace = perfetto_trace::read(&out);
    (run, trace, window.0, window.1)
}

/// The command buffers that have stages in the trace.
fn traced_command_buffers(trace: &Resolved) -> BTreeSet<u64> {
    trace.stages.iter().map(|s| s.command_buffer).collect()
}

/// What both runs share: the session reached the layer, and only submissions made while it
/// ran are in its trace.
fn assert_session_window(run: &Run, trace: &Resolved, start: u64, end: u64) {
    for line in ["Perfetto session 0 started", "Perfetto session 0 stopped"] {
        assert_eq!(
            run.stderr.matches(line).count(),
            1,
            "{line}: {}",
            run.stderr
        );
    }
    let submitted = run.report().devices[0].submissions.len();
    assert!(
        !trace.submits.is_empty(),
        "the session captured submissions"
    );
    assert!(
        trace.submits.len() < submitted,
        "only those made while it ran: {} of {submitted}",
        trace.submits.len()
    );
    for s in &trace.submits {
        assert!(
            start <= s.boot_ns && s.boot_ns <= end,
            "{s:?} outside [{start}, {end}]"
        );
    }
    for s in &trace.stages {
        assert!(start <= s.boot_ns && s.boot_ns + s.duration <= end, "{s:?}");
    }
}

#[test]
fn a_session_started_mid_run_traces_command_buffers_recorded_from_then_on() {
    let (run, trace, start, end) = session_in_the_middle(&[]);
    assert_session_window(&run, &trace, start, end);
    // Each frame records its own command buffers; the reusable one ("copy and update"),
    // recorded at start-up before any session, is submitted but never instrumented.
    let copy = trace
        .names
        .iter()
        .find(|n| n.name == "copy and update")
        .expect("names reach a session that starts later")
        .object;
    assert!(trace
        .submits
        .iter()
        .any(|s| s.command_buffers.contains(&copy)));
    assert!(!traced_command_buffers(&trace).contains(&copy));
    assert!(trace.stages.iter().any(|s| s.name == "Draw"));
}

#[test]
fn with_instrument_a_later_session_also_sees_command_buffers_recorded_before_it() {
    let (run, trace, start, end) = session_in_the_middle(&[("GPU_TRACE_INSTRUMENT", "1")]);
    assert_session_window(&run, &trace, start, end);
    let copy = trace
        .names
        .iter()
        .find(|n| n.name == "copy and update")
        .expect("the reusable command buffer's name")
        .object;
    assert!(traced_command_buffers(&trace).contains(&copy));
}
