//! Frames end at `vkQueuePresentKHR`: a real swapchain on an Xvfb window.

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::harness::{Run, TempDir, XServer};
use utrace_tests::trace_txt::Item;
use utrace_tests::workload;

/// Runs `scenario` on a window of its own X server, tracing to stdout, validation beneath.
fn presenting(scenario: &str, frames: u32) -> Run {
    let x = XServer::start();
    let dir = TempDir::new(scenario);
    let run = workload!(scenario)
        .arg("--frames", &frames.to_string())
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("DISPLAY", &x.display)
        .run(&dir);
    assert_clean(&run);
    assert_eq!(run.report.presents, frames);
    run
}

#[test]
fn frames_are_counted_at_present() {
    let run = presenting("frames", 5);
    let trace = assert_trace_matches(&run.stdout, &run);
    let frames: Vec<u32> = trace.batches.iter().map(|b| b.frame).collect();
    assert_eq!(frames, vec![0, 1, 2, 3, 4]);
    // Each END OF FRAME comes right after the batch of its frame.
    let expected: Vec<Item> = (0..5)
        .flat_map(|f| [Item::Batch(f as usize), Item::EndOfFrame(f)])
        .chain([Item::EndOfTrace(0)])
        .collect();
    assert_eq!(trace.items, expected);
}

#[test]
fn demo_is_traced_and_validation_clean() {
    let run = presenting("demo", 3);
    let trace = assert_trace_matches(&run.stdout, &run);
    assert_eq!(trace.frames_ended(), vec![0, 1, 2]);
    // Two command buffers in one batch, and the reusable one in every frame.
    assert!(trace.batches.iter().any(|b| b.cmdbufs == 2));
}
