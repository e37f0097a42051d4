//! Frames end at `vkQueuePresentKHR`: a real swapchain on an Xvfb window.

use utrace_tests::checks::{assert_balanced, assert_clean, assert_trace_matches};
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
    assert_eq!(run.report().presents, frames);
    run
}

#[test]
fn frames_are_counted_at_present() {
    let run = presenting("frames", 5);
    let trace = assert_trace_matches(&run.stdout, &run);
    let frames: Vec<u32> = trace.batches.iter().map(|b| b.frame).collect();
    assert_eq!(frames, vec![0, 1, 2, 3, 4]);
    // Each END OF FRAME comes right after the batch of its frame.
    let expected: Vec<Item> = (0..4)
        .map(Item::Header)
        .chain((0..5).flat_map(|f| [Item::Batch(f as usize), Item::EndOfFrame(f)]))
        .chain([Item::EndOfTrace(0)])
        .collect();
    assert_eq!(trace.items, expected);
    // The swapchain image's format is known (from vkCreateSwapchainKHR).
    for b in &trace.batches {
        let clear = utrace_tests::checks::named(b, "start_clear_color_image");
        assert_eq!(clear.len(), 1);
        let format = clear[0].arg("format").unwrap();
        assert!(format != "UNDEFINED" && format.contains('8'), "{format}");
    }
}

#[test]
fn demo_is_traced_and_validation_clean() {
    let run = presenting("demo", 3);
    let trace = assert_trace_matches(&run.stdout, &run);
    trace.batches.iter().for_each(assert_balanced);
    assert_eq!(trace.frames_ended(), vec![0, 1, 2]);
    // Two command buffers in one batch, and the reusable one in every frame.
    assert!(trace.batches.iter().any(|b| b.cmdbufs == 2));
}

#[test]
fn demo_without_a_window_stays_in_frame_zero() {
    // No DISPLAY: the same frames' work, but nothing is presented, so no frame ends.
    let dir = TempDir::new("demo-headless");
    let run = workload!("demo")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .run(&dir);
    assert_clean(&run);
    assert_eq!(run.report().presents, 0);
    let trace = assert_trace_matches(&run.stdout, &run);
    assert_eq!(
        trace.batches.len(),
        6,
        "two submissions in each of 3 frames"
    );
    trace.batches.iter().for_each(assert_balanced);
    assert!(trace.batches.iter().all(|b| b.frame == 0));
    assert!(trace.frames_ended().is_empty());
}

/// `frames` (10 frames) with `GPU_TRACE_FRAMES=3-5`, and `extra` environment.
fn captured_window(extra: &[(&str, &str)]) -> (Run, utrace_tests::trace_txt::Trace) {
    let x = XServer::start();
    let dir = TempDir::new("capture");
    let mut w = workload!("frames")
        .arg("--frames", "10")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_FRAMES", "3-5")
        .env("DISPLAY", &x.display);
    for (k, v) in extra {
        w = w.env(k, v);
    }
    let run = w.run(&dir);
    assert_clean(&run);
    let trace = utrace_tests::checks::parse(&run.stdout);
    (run, trace)
}

#[test]
fn a_frame_window_traces_what_was_recorded_and_submitted_inside_it() {
    let (run, trace) = captured_window(&[]);
    let subs = &run.report().devices[0].submissions;
    // Frames 3 to 5 only; in each, only the command buffer recorded that frame: the one
    // recorded at start-up was not instrumented.
    let frames: Vec<u32> = trace.batches.iter().map(|b| b.frame).collect();
    assert_eq!(frames, [3, 4, 5]);
    for b in &trace.batches {
        let sub = &subs[b.frame as usize];
        assert_eq!(b.cmdbufs, 1);
        let starts = utrace_tests::checks::named(b, "start_cmd_buffer");
        assert_eq!(starts[0].arg("cmd"), Some(sub.cmdbufs[0].as_str()));
        for e in &b.events {
            assert!(sub.cpu_before_ns <= e.ns && e.ns <= sub.cpu_after_ns);
        }
    }
    assert_eq!(trace.frames_ended(), vec![3, 4, 5]);
}

#[test]
fn with_instrument_the_window_also_sees_command_buffers_recorded_before_it() {
    let (run, trace) = captured_window(&[("GPU_TRACE_INSTRUMENT", "1")]);
    let subs = &run.report().devices[0].submissions;
    let frames: Vec<u32> = trace.batches.iter().map(|b| b.frame).collect();
    assert_eq!(frames, [3, 4, 5]);
    for b in &trace.batches {
        let sub = &subs[b.frame as usize];
        assert_eq!(b.cmdbufs, 2, "the start-up command buffer too");
        let cmds: Vec<&str> = utrace_tests::checks::named(b, "start_cmd_buffer")
            .iter()
            .map(|e| e.arg("cmd").unwrap())
            .collect();
        assert_eq!(cmds, [sub.cmdbufs[0].as_str(), sub.cmdbufs[1].as_str()]);
    }
    assert_eq!(trace.frames_ended(), vec![3, 4, 5]);
}

#[test]
fn a_frame_window_the_application_never_reaches_is_said() {
    // No DISPLAY: the demo presents nothing, so frame 0 never ends and frame 5 never begins.
    let dir = TempDir::new("window-missed");
    let run = workload!("demo")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_FRAMES", "5-10")
        .run(&dir);
    assert_clean(&run);
    let said: Vec<&str> = utrace_tests::checks::said(&run)
        .into_iter()
        .filter(|l| l.starts_with("utrace: warning"))
        .collect();
    assert_eq!(said.len(), 1, "{}", run.stderr);
    assert!(
        said[0].contains("GPU_TRACE_FRAMES=5-10 never began")
            && said[0].contains("after 0 frame(s)"),
        "{}",
        said[0]
    );
    assert!(utrace_tests::checks::parse(&run.stdout).batches.is_empty());
    // A window that began says nothing of the kind.
    let (run, _) = captured_window(&[]);
    assert!(!run.stderr.contains("never began"), "{}", run.stderr);
}
