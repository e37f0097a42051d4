//! A process stopped by a signal while it writes a Perfetto trace (Ctrl-C, SIGTERM,
//! `kill -9`): no exit handler runs, and the file must still decode, holding everything up
//! to the last write period (the layer reads its ring into the file every 100 ms).

use std::time::Duration;

use utrace_tests::harness::{Kill, TempDir};
use utrace_tests::workload;

/// How long the workload's frames run before the signal (its start-up not counted): a few
/// write periods.
const RUN_FOR: Duration = Duration::from_millis(2500);
/// The newest stage in the file is at most this much older than the signal: one write
/// period (100 ms), plus the time a batch takes to complete and be written, with room for
/// a busy machine (a thread that waits a second for its core is beyond what two hogs make).
const AT_MOST_OLD: Duration = Duration::from_millis(1800);

#[test]
fn a_perfetto_trace_survives_sigint_sigterm_and_sigkill() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        let dir = TempDir::new("killed");
        let file = dir.path().join("gpu.pftrace");
        let ready = dir.path().join("ready");
        let mut kill = Kill {
            after: RUN_FOR,
            from: Some(ready.clone()),
            signal,
            sent_boot_ns: 0,
        };
        // The headless demo, for far longer than it is given.
        let run = workload!("demo")
            .arg("--frames", "1000000")
            .arg("--ready-file", ready.to_str().unwrap())
            .layers(&["VK_LAYER_utrace"])
            .env("GPU_TRACEFILE", file.to_str().unwrap())
            .run_killed(&dir, &mut kill);
        assert_eq!(
            run.signal,
            Some(signal),
            "killed by the signal: {}",
            run.stderr
        );
        // Decodes whole, every stage resolving its queue, stage and clock.
        let trace = utrace_tests::perfetto_trace::read(&file);
        assert!(
            trace.submits.len() > 10,
            "signal {signal}: {} submissions in the file",
            trace.submits.len()
        );
        let newest = trace
            .stages
            .iter()
            .map(|s| s.boot_ns + s.duration)
            .max()
            .expect("stages");
        let age = Duration::from_nanos(kill.sent_boot_ns.saturating_sub(newest));
        assert!(
            age <= AT_MOST_OLD,
            "signal {signal}: the newest stage in the file is {age:?} older than the signal"
        );
    }
}
