//! Real applications run with the layer: vkcube (package vulkan-tools) on an Xvfb window,
//! enabled through VK_INSTANCE_LAYERS with validation beneath.

use utrace_tests::checks::{assert_well_nested, parse, validation_log};
use utrace_tests::harness::{run_application, TempDir, XServer, VALIDATION_LOG};

/// Runs vkcube for 10 frames on its own X server, traced to `file`, validation beneath and
/// its log on; asserts it succeeded and validation said nothing.
fn vkcube(dir: &TempDir, file: &std::path::Path) {
    let x = XServer::start();
    // The validation layer's own log: vkcube installs no messenger by default. The positive
    // control (tests/harness.rs) shows this log is heard when there is something to say.
    let mut envs = vec![
        ("DISPLAY", x.display.as_str()),
        ("GPU_TRACEFILE", file.to_str().unwrap()),
    ];
    envs.extend_from_slice(VALIDATION_LOG);
    let out = run_application(
        dir,
        "vkcube",
        &["--c", "10"],
        "VK_LAYER_utrace:VK_LAYER_KHRONOS_validation",
        &envs,
    );
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "vkcube failed: {text}");
    assert_eq!(validation_log(&text), Vec::<&str>::new(), "{text}");
}

#[test]
fn vkcube_is_traced_frame_by_frame_and_validation_stays_silent() {
    let dir = TempDir::new("vkcube");
    let file = dir.path().join("trace.txt");
    vkcube(&dir, &file);
    let trace = parse(&std::fs::read_to_string(&file).unwrap());
    // vkcube presents 10 frames; its set-up submission comes first in frame 0.
    assert_eq!(trace.frames_ended(), (0..10).collect::<Vec<u32>>());
    assert!(trace.batches.len() >= 10);
    for b in &trace.batches {
        assert!(b
            .events
            .first()
            .is_some_and(|e| e.name == "start_cmd_buffer"));
        assert_well_nested(&b.events, "vkcube");
    }
    // Each frame draws the cube in a render pass.
    let draws = trace
        .batches
        .iter()
        .filter(|b| {
            b.events.iter().any(|e| e.name == "start_render_pass")
                && b.events.iter().any(|e| e.name == "start_draw")
        })
        .count();
    assert!(draws >= 10, "{draws} batches with a render pass and a draw");
    assert_eq!(trace.ends[0].dropped, 0);
}

#[test]
fn vkcube_writes_a_perfetto_trace_that_resolves() {
    let dir = TempDir::new("vkcube-perfetto");
    let file = dir.path().join("vkcube.pftrace");
    vkcube(&dir, &file);
    // Every stage resolves its queue, stage and clock on its own sequence.
    let trace = utrace_tests::perfetto_trace::read(&file);
    assert!(
        trace.submits.len() >= 10,
        "{} submissions",
        trace.submits.len()
    );
    let count = |name: &str| trace.stages.iter().filter(|s| s.name == name).count();
    assert!(count("Render Pass") >= 10 && count("Draw") >= 10);
    assert_eq!(count("Command Buffer"), trace.submits.len());
}
