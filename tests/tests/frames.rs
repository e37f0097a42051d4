//! Frames end at `vkQueuePresentKHR`: a real swapchain on an Xvfb window.

use utrace_tests::checks::{assert_batches_match, parse};
use utrace_tests::harness::{TempDir, XServer};
use utrace_tests::trace_txt::Item;
use utrace_tests::workload;

#[test]
fn frames_are_counted_at_present() {
    let x = XServer::start();
    let dir = TempDir::new("frames");
    let run = workload!("frames")
        .arg("--frames", "5")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("DISPLAY", &x.display)
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert!(
        run.report.validation_messages.is_empty(),
        "{:#?}",
        run.report.validation_messages
    );
    assert_eq!(run.report.presents, 5);
    let trace = parse(&run.stdout);
    let batches: Vec<_> = trace.batches.iter().collect();
    assert_batches_match(&batches, &run.report.devices[0].submissions);
    let frames: Vec<u32> = trace.batches.iter().map(|b| b.frame).collect();
    assert_eq!(frames, vec![0, 1, 2, 3, 4]);
    assert_eq!(trace.frames_ended(), vec![0, 1, 2, 3, 4]);
    // Each END OF FRAME comes right after the batch of its frame.
    let expected: Vec<Item> = (0..5)
        .flat_map(|f| [Item::Batch(f as usize), Item::EndOfFrame(f)])
        .chain([Item::EndOfTrace(0)])
        .collect();
    assert_eq!(trace.items, expected);
}

#[test]
fn demo_is_traced_and_validation_clean() {
    let x = XServer::start();
    let dir = TempDir::new("demo");
    let run = workload!("demo")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("DISPLAY", &x.display)
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert!(
        run.report.validation_messages.is_empty(),
        "{:#?}",
        run.report.validation_messages
    );
    let trace = parse(&run.stdout);
    let batches: Vec<_> = trace.batches.iter().collect();
    assert_batches_match(&batches, &run.report.devices[0].submissions);
    assert_eq!(trace.frames_ended(), vec![0, 1, 2]);
    // Two command buffers in one batch, and the reusable one in every frame.
    assert!(trace.batches.iter().any(|b| b.cmdbufs == 2));
}
