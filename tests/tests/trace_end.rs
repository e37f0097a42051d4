//! The path most applications take, at scale, and the end of every trace: one one-time
//! command buffer of 100,000 draws of a visible triangle is written whole before the device
//! goes, in txt and Perfetto; batches the traceq thread had not begun when the device went
//! (or the process exited) are written then; and when the layer's time to write runs out,
//! the trace still ends with its end record, the loss counted. (The million-draw version
//! takes Lavapipe a minute of GPU time: `scripts/million-draws.sh` runs the first test with
//! `UTRACE_TEST_DRAWS=1000000`.) A one-time command buffer of many queries has them copied
//! by the layer, a small one is read from its queries.

use utrace_tests::checks::{assert_clean, assert_trace_matches, parse, said};
use utrace_tests::harness::{Run, TempDir};
use utrace_tests::queue_counts::counts;
use utrace_tests::trace_txt::EndOfTrace;
use utrace_tests::{perfetto_trace, workload};

/// Draws of the one-time command buffer: 100,000 in CI, `UTRACE_TEST_DRAWS` if set.
fn draws() -> u64 {
    std::env::var("UTRACE_TEST_DRAWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

/// The draws' batch: the command buffer, the render pass, and each draw, begun and ended.
fn draws_batch_events(draws: u64) -> u64 {
    2 * draws + 4
}

/// Every event of `many-draws` with `draws`: the draws' batch, then the pixel's readback
/// (a command buffer holding one copy).
fn all_events(draws: u64) -> u64 {
    draws_batch_events(draws) + 4
}

/// `many-draws` of `draws`, traced in txt (on stdout) and Perfetto (`gpu.pftrace`), with
/// `vars` set (the layer's debug variables).
fn run_many_draws(dir: &TempDir, draws: u64, vars: &[(&str, &str)], exit: bool) -> Run {
    let file = dir.path().join("gpu.pftrace");
    let mut w = workload!("many-draws")
        .arg("--draws", &draws.to_string())
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE_FORMAT", "txt,perfetto")
        .env("GPU_TRACEFILE", file.to_str().unwrap());
    if exit {
        w = w.arg("--exit-without-destroy", "");
    }
    for (k, v) in vars {
        w = w.env(k, v);
    }
    w.run(dir)
}

/// The Perfetto file's one end record.
fn perfetto_end(dir: &TempDir) -> (EndOfTrace, bool) {
    let trace = perfetto_trace::read(&dir.path().join("gpu.pftrace"));
    assert_eq!(trace.ends.len(), 1, "one end record: {:?}", trace.ends);
    trace.ends[0].clone()
}

#[test]
fn a_one_time_command_buffer_of_many_draws_is_written_whole_before_the_device_goes() {
    let draws = draws();
    let dir = TempDir::new("many-draws");
    let run = run_many_draws(&dir, draws, &[], false);
    assert_clean(&run);
    let txt = parse(&run.stdout);
    assert_eq!(txt.batches.len(), 2);
    assert_eq!(
        txt.batches[0].events.len() as u64,
        draws_batch_events(draws)
    );
    let end = &txt.ends[0];
    assert_eq!((end.events, end.dropped), (all_events(draws), 0), "{end:?}");
    let trace = perfetto_trace::read(&dir.path().join("gpu.pftrace"));
    let count = |name: &str| trace.stages.iter().filter(|s| s.name == name).count() as u64;
    assert_eq!(count("Draw"), draws, "every draw's stage");
    assert_eq!(count("Render Pass"), 1);
    assert_eq!(count("Command Buffer"), 2);
    let (end, warning) = perfetto_end(&dir);
    assert_eq!(
        (end.events, end.dropped, warning),
        (all_events(draws), 0, false)
    );
}

#[test]
fn a_large_one_time_command_buffer_is_copied_by_the_layer_a_small_one_read_from_its_queries() {
    // 1,000 draws write 2,004 queries: traceq reads them from the queries. 3,000 write
    // 6,004, more than the layer reads from queries (4,096): the layer's command buffer
    // copies them in the same submission, and traceq reads memory. The pixel's readback
    // (a small one-time command buffer) is read from its queries either way. Validation
    // beneath stays silent and the times match the workload's own.
    for (draws, copied) in [(1000, 0), (3000, 1)] {
        let dir = TempDir::new("one-time-copies");
        let run = workload!("many-draws")
            .arg("--draws", &draws.to_string())
            .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
            .env("GPU_TRACE", "1")
            .env("UTRACE_LOG", "debug")
            .run(&dir);
        assert_clean(&run);
        let trace = assert_trace_matches(&run.stdout, &run);
        let end = &trace.ends[0];
        assert_eq!((end.events, end.dropped), (all_events(draws), 0), "{end:?}");
        let counts = counts(&run.stderr);
        let wrapped = counts.recorded + counts.by_recipe + counts.by_recording;
        assert_eq!(
            (wrapped, counts.unwrapped),
            (copied, 2 - copied),
            "{draws} draws: {counts:?}"
        );
    }
}

#[test]
fn batches_not_yet_begun_when_the_device_goes_or_the_process_exits_are_written_whole() {
    // The traceq thread takes no batch before it is asked to stop (a debug build's hold):
    // every batch is still to write when vkDestroyDevice, or the exit, comes.
    for exit in [false, true] {
        let dir = TempDir::new("held-batches");
        let hold = [("UTRACE_DEBUG_TRACEQ_HOLD", "1")];
        let run = run_many_draws(&dir, 1000, &hold, exit);
        assert!(run.success, "exit {exit}: {}", run.stderr);
        assert!(said(&run).is_empty(), "exit {exit}: {}", run.stderr);
        let txt = parse(&run.stdout);
        assert_eq!(txt.batches.len(), 2, "exit {exit}");
        let end = &txt.ends[0];
        assert_eq!(
            (end.events, end.dropped),
            (all_events(1000), 0),
            "exit {exit}"
        );
        let (end, _) = perfetto_end(&dir);
        assert_eq!(
            (end.events, end.dropped),
            (all_events(1000), 0),
            "exit {exit}"
        );
    }
}

#[test]
fn a_trace_cut_short_by_the_layers_time_limit_still_ends_and_counts_what_it_lost() {
    // Held, and no time to write at the end: nothing is written, and every output still
    // ends with its end record counting every event as dropped, said once on stderr.
    for exit in [false, true] {
        let dir = TempDir::new("cut-short");
        let vars = [
            ("UTRACE_DEBUG_TRACEQ_HOLD", "1"),
            ("UTRACE_DEBUG_WRITE_LIMIT_MS", "0"),
        ];
        let run = run_many_draws(&dir, 1000, &vars, exit);
        assert!(run.success, "exit {exit}: {}", run.stderr);
        let said = said(&run);
        assert_eq!(said.len(), 1, "exit {exit}: {}", run.stderr);
        assert!(
            said[0].contains("of 2 batch(es) were not yet written"),
            "exit {exit}: {}",
            said[0]
        );
        let txt = parse(&run.stdout);
        assert!(txt.batches.is_empty(), "exit {exit}");
        let end = &txt.ends[0];
        let lost = all_events(1000);
        assert_eq!(
            (end.batches, end.events, end.dropped),
            (0, 0, lost),
            "exit {exit}"
        );
        let (end, warning) = perfetto_end(&dir);
        assert_eq!(
            (end.events, end.dropped, warning),
            (0, lost, true),
            "exit {exit}"
        );
    }
}
