//! The short form of the soak test (the full one is `utrace-soak`, 100,000 submissions):
//! no event lost, resident memory flat after warm-up.

use utrace_tests::checks::soak_result;
use utrace_tests::harness::TempDir;
use utrace_tests::workload;

#[test]
fn twenty_thousand_submissions_lose_nothing_and_memory_stays_flat() {
    let dir = TempDir::new("soak");
    let trace = dir.path().join("trace.txt");
    let run = workload!("soak")
        .arg("--frames", "20000")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", trace.to_str().unwrap())
        .run(&dir);
    let soak = soak_result(&run, &trace);
    assert_eq!(soak.submitted, 20_000);
    assert_eq!(soak.batches, soak.submitted, "{soak:?}");
    assert_eq!(soak.events, soak.submitted * 6, "{soak:?}");
    assert_eq!(soak.dropped, 0);
    // Flat: the last nine tenths of the run add less than 4 MiB (allocator noise), where a
    // leak of even one small allocation per submission would add far more.
    let growth = soak.rss_at_end_kib as i64 - soak.rss_after_warmup_kib as i64;
    assert!(
        growth < 4096,
        "resident memory grew by {growth} KiB: {soak:?}"
    );
}
