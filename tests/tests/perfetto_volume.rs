//! Perfetto output at volume: a long run across the session's clears and the layer's clock
//! snapshots, one batch larger than the SDK's shared memory, and the smallest ring under
//! one huge batch or many small ones. Nothing may be lost or left unresolvable.

use utrace_tests::checks::assert_clean;
use utrace_tests::harness::TempDir;
use utrace_tests::perfetto_checks::assert_snapshots_true;
use utrace_tests::perfetto_trace;
use utrace_tests::workload;

#[test]
fn a_long_run_keeps_every_stage_resolvable_across_clears_and_snapshots() {
    // 20,000 submissions (a few seconds): the session clears incremental state every
    // second, and the layer samples the clock every second.
    let dir = TempDir::new("perfetto-soak");
    let file = dir.path().join("soak.pftrace");
    let run = workload!("soak")
        .arg("--frames", "20000")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    // `read` fails if any stage refers to an iid not (re-)sent on its sequence since the
    // last clear, or to a clock without a snapshot before it.
    let trace = perfetto_trace::read(&file);
    assert_eq!(trace.submits.len(), 20_000);
    assert_eq!(trace.stages.len(), 60_000, "three ranges per submission");
    // The run takes a few seconds on the fastest machines of this kind (a slower one only
    // lengthens it): the session clears every second.
    assert!(trace.clears >= 2, "cleared {} times", trace.clears);
    assert!(trace.snapshots.len() >= 2, "{:?}", trace.snapshots);
    // GPU time only moves forward, and each snapshot is true to the clocks' offset.
    assert!(trace
        .snapshots
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    assert_snapshots_true(&trace, 200_000);
}

#[test]
fn a_batch_larger_than_perfettos_shared_memory_loses_no_stage() {
    // One command buffer of 100,000 traced fills: 100,001 stages in one batch. The txt
    // trace of the same run has them all; so must the Perfetto file. (When the data source
    // dropped on a full shared memory, 100,000 dispatches kept 77,856 of theirs.)
    let dir = TempDir::new("many-commands");
    let file = dir.path().join("gpu.pftrace");
    let run = workload!("many-commands")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE_FORMAT", "txt,perfetto")
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    let txt = utrace_tests::checks::parse(&run.stdout);
    assert_eq!(txt.batches.len(), 1);
    assert_eq!(txt.ends[0].dropped, 0);
    let commands = utrace_tests::patterns::many_commands::COMMANDS as usize;
    assert_eq!(txt.batches[0].events.len(), 2 * commands + 2);
    let trace = perfetto_trace::read(&file);
    let count = |name: &str| trace.stages.iter().filter(|s| s.name == name).count();
    assert_eq!(count("Fill Buffer"), commands, "every fill's stage");
    assert_eq!(count("Command Buffer"), 1);
    assert_eq!(trace.stages.len(), commands + 1);
}

#[test]
fn the_smallest_ring_loses_no_stage_of_a_batch_many_times_its_size() {
    // The smallest ring (1 MiB) and one batch of 100,001 stages (about 10 MB in the file).
    // The ring used to come round before the service wrote it out, and the oldest stages
    // were gone without a word; the sink now waits while half the ring is not yet in the
    // file, so every stage is there and nothing needs the reader's wrapped-ring leniency.
    let dir = TempDir::new("small-ring");
    let file = dir.path().join("gpu.pftrace");
    let run = workload!("many-commands")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("UTRACE_PERFETTO_BUFFER_KB", "1024")
        .run(&dir);
    assert_clean(&run);
    // Read leniently (a sequence's first packet says a packet may have been dropped before
    // it), but nothing may be left unplaced, and every stage must be there.
    let trace = perfetto_trace::read_wrapped(&file);
    assert_eq!(trace.skipped, 0, "nothing unplaceable");
    let commands = utrace_tests::patterns::many_commands::COMMANDS as usize;
    let count = |name: &str| trace.stages.iter().filter(|s| s.name == name).count();
    assert_eq!(count("Fill Buffer"), commands, "every fill's stage");
    assert_eq!(trace.stages.len(), commands + 1);
}

#[test]
fn the_smallest_ring_keeps_up_with_many_small_batches() {
    // 10,000 resubmissions, a batch of two stages each, into the smallest ring. The pace
    // counts each batch's bytes; counted far above what the file gets (2 KiB a batch
    // once), it waited for nothing at every few batches and the trace thread did not
    // finish before the device went, losing 4,232 of the 10,000.
    let frames = 10_000;
    let dir = TempDir::new("small-ring-small-batches");
    let file = dir.path().join("gpu.pftrace");
    let run = workload!("resubmit")
        .arg("--frames", &frames.to_string())
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("UTRACE_PERFETTO_BUFFER_KB", "1024")
        .run(&dir);
    assert_clean(&run);
    assert!(
        !run.stderr.contains("did not finish"),
        "the trace thread finished: {}",
        run.stderr
    );
    let trace = perfetto_trace::read_wrapped(&file);
    assert_eq!(trace.skipped, 0, "nothing unplaceable");
    let count = |name: &str| trace.stages.iter().filter(|s| s.name == name).count();
    assert_eq!(count("Command Buffer"), frames, "every run's stage");
}
