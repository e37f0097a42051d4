//! Real applications run with the layer: vkcube (package vulkan-tools) on an Xvfb window,
//! enabled through VK_INSTANCE_LAYERS with validation beneath; glmark2 (package
//! glmark2-x11) on OpenGL over Zink under xvfb-run, whose X server loads the layer too, and
//! on an X server of its own with GPU counters and validation beneath.

use utrace_tests::checks::{assert_well_nested, parse, validation_log};
use utrace_tests::harness::{run_application, TempDir, XServer, VALIDATION_LOG};

/// Runs vkcube for 10 frames on its own X server, traced to `file`, validation beneath and
/// its log on; asserts it succeeded and validation said nothing.
fn vkcube(dir: &TempDir, file: &std::path::Path) {
    vkcube_with(dir, file, &[]);
}

/// [`vkcube`] with `extra` variables.
fn vkcube_with(dir: &TempDir, file: &std::path::Path, extra: &[(&str, &str)]) {
    let x = XServer::start();
    // The validation layer's own log: vkcube installs no messenger by default. The positive
    // control (tests/harness.rs) shows this log is heard when there is something to say.
    let mut envs = vec![
        ("DISPLAY", x.display.as_str()),
        ("GPU_TRACEFILE", file.to_str().unwrap()),
    ];
    envs.extend_from_slice(VALIDATION_LOG);
    envs.extend_from_slice(extra);
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

/// vkcube records its command buffers once, for simultaneous use, and submits each again
/// and again: with pipeline statistics on, each run's are read by the layer's copy after
/// it (the run resets them at its begin). Every frame draws the cube: 36 vertices, 12
/// triangles, each vertex shaded once (a non-indexed draw), some fragments; the render
/// pass and the command buffer sum the one draw. Validation stays silent.
#[test]
fn vkcube_gets_pipeline_statistics_every_frame() {
    let dir = TempDir::new("vkcube-counters");
    let file = dir.path().join("trace.txt");
    vkcube_with(&dir, &file, &[("GPU_TRACE_COUNTERS", "pipeline")]);
    let trace = parse(&std::fs::read_to_string(&file).unwrap());
    let mut frames = 0;
    for b in &trace.batches {
        let Some(draw) = b.events.iter().find(|e| e.name == "end_draw") else {
            continue;
        };
        frames += 1;
        let value = |e: &utrace_tests::trace_txt::Event, name: &str| -> u64 {
            e.arg(name)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name}: {e:?}"))
        };
        assert_eq!(value(draw, "input_vertices"), 36, "{draw:?}");
        assert_eq!(value(draw, "input_primitives"), 12, "{draw:?}");
        assert_eq!(value(draw, "vertex_invocations"), 36, "{draw:?}");
        assert!(value(draw, "fragment_invocations") > 0, "{draw:?}");
        for name in ["end_render_pass", "end_cmd_buffer"] {
            let e = b.events.iter().find(|e| e.name == name).unwrap();
            assert_eq!(
                value(e, "fragment_invocations"),
                value(draw, "fragment_invocations"),
                "{e:?}"
            );
            assert_eq!(e.arg("partial"), None, "{e:?}");
        }
    }
    assert!(frames >= 10, "{frames} frames drawn");
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

/// The case a user met: `GPU_TRACEFILE=gl.txt LIBGL_ALWAYS_SOFTWARE=1 GALLIUM_DRIVER=zink
/// xvfb-run -a glmark2`. The X server inherits the environment and its GLX runs on Zink, so
/// it loads the layer and makes devices too, but traces nothing: it must leave gl.txt to
/// glmark2 (and say so at `info`), instead of writing its empty ends over glmark2's trace.
#[test]
fn glmark2_on_zink_under_xvfb_run_keeps_its_trace_file_to_itself() {
    let dir = TempDir::new("glmark2");
    let server_log = dir.path().join("xvfb.err");
    let out = run_application(
        &dir,
        "xvfb-run",
        &[
            "-a",
            "-e",
            server_log.to_str().unwrap(),
            "glmark2",
            "-b",
            "build:duration=0.5",
        ],
        "VK_LAYER_utrace",
        &[
            ("GPU_TRACEFILE", "gl.txt"),
            ("LIBGL_ALWAYS_SOFTWARE", "1"),
            ("GALLIUM_DRIVER", "zink"),
            ("UTRACE_LOG", "info"),
        ],
    );
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "glmark2 failed: {text}");
    assert!(
        text.contains("GL_RENDERER:    zink"),
        "glmark2 ran on Zink: {text}"
    );
    // xvfb-run stops the server without waiting for it: its exit may still be under way.
    let said_at_exit = "nothing was traced to gl.txt: the path was left as it was";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let server = loop {
        let server = std::fs::read_to_string(&server_log).unwrap_or_default();
        if server.contains(said_at_exit) || std::time::Instant::now() > deadline {
            break server;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(
        server.contains("utrace: info: tracing device 0") && server.contains(said_at_exit),
        "the X server loaded the layer, traced nothing and left the path alone: {server}"
    );
    // glmark2's trace, whole, in the file named: it starts with its header, which names
    // glmark2, and ends with its one END OF TRACE; no other process wrote a file of its own
    // beside it.
    let file = std::fs::read_to_string(dir.path().join("gl.txt")).expect("gl.txt");
    assert!(
        file.starts_with("TRACE ORIGIN: device=0, "),
        "{}",
        &file[..file.len().min(300)]
    );
    let trace = parse(&file);
    assert_eq!(trace.header(0, "process"), Some("glmark2"));
    assert_eq!(trace.ends.len(), 1, "one device's end");
    assert_eq!(trace.ends[0].batches as usize, trace.batches.len());
    // Frames in glmark2's half second: tens here, fewer on a slow or busy machine; its
    // trace is more than its first batch either way.
    assert!(trace.batches.len() > 1, "{} batches", trace.batches.len());
    let others: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gl.") && n != "gl.txt")
        .collect();
    assert!(others.is_empty(), "{others:?}");
}

/// glmark2's `build` scene on Zink (one-time command buffers, dynamic rendering, one
/// multi-draw of a model a frame) on its own X server, validation beneath, traced to
/// gl.txt with `envs` when `traced`; its output and validation's messages, each as its VUID
/// and the kinds of object it names (handles differ from run to run).
fn glmark2_on_zink(dir: &TempDir, traced: bool, envs: &[(&str, &str)]) -> (String, Vec<String>) {
    let x = XServer::start();
    let mut all = vec![
        ("DISPLAY", x.display.as_str()),
        ("LIBGL_ALWAYS_SOFTWARE", "1"),
        ("GALLIUM_DRIVER", "zink"),
    ];
    all.extend_from_slice(VALIDATION_LOG);
    all.extend_from_slice(envs);
    let layers = if traced {
        "VK_LAYER_utrace:VK_LAYER_KHRONOS_validation"
    } else {
        "VK_LAYER_KHRONOS_validation"
    };
    let args = ["-b", "build:duration=0.5"];
    let out = run_application(dir, "glmark2", &args, layers, &all);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "glmark2 failed: {text}");
    assert!(text.contains("GL_RENDERER:    zink"), "on Zink: {text}");
    let mut messages: Vec<String> = text
        .lines()
        .filter(|l| l.contains("Validation Error"))
        .map(|l| {
            let vuid = l.split("[ ").nth(1).and_then(|r| r.split(' ').next());
            let kinds: Vec<&str> = l
                .split("type = ")
                .skip(1)
                .filter_map(|t| t.split(';').next())
                .collect();
            format!("{} {}", vuid.unwrap_or("?"), kinds.join(","))
        })
        .collect();
    messages.sort();
    (text, messages)
}

/// A real client traced with counters: glmark2 on Zink. Zink 22.3 leaves a few objects at
/// vkDestroyDevice (validation says so without any layer), so the layer is held to adding
/// nothing to what validation says without it. Every draw counts its triangles' vertices
/// (a triangle list: 3 per primitive, each shaded once) and some fragments; each dynamic
/// rendering instance sums its draws.
#[test]
fn glmark2_on_zink_with_counters_counts_its_draws_and_adds_no_validation_message() {
    let dir = TempDir::new("glmark2-bare");
    let (_, bare) = glmark2_on_zink(&dir, false, &[]);
    let dir = TempDir::new("glmark2-counters");
    let envs = [
        ("GPU_TRACEFILE", "gl.txt"),
        ("GPU_TRACE_COUNTERS", "pipeline"),
    ];
    let (text, traced) = glmark2_on_zink(&dir, true, &envs);
    assert_eq!(traced, bare, "validation beneath utrace said more: {text}");
    let trace = parse(&std::fs::read_to_string(dir.path().join("gl.txt")).expect("gl.txt"));
    let value = |e: &utrace_tests::trace_txt::Event, name| {
        e.arg(name)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{name} on {e:?}"))
    };
    let mut draws = 0;
    for b in &trace.batches {
        let mut in_rendering = 0;
        for e in &b.events {
            if e.name.starts_with("end_draw") {
                let vertices = value(e, "input_vertices");
                assert_eq!(vertices, 3 * value(e, "input_primitives"), "{e:?}");
                assert_eq!(value(e, "vertex_invocations"), vertices, "{e:?}");
                assert!(value(e, "fragment_invocations") > 0, "{e:?}");
                in_rendering += vertices;
                draws += 1;
            } else if e.name == "end_rendering" && in_rendering > 0 {
                assert_eq!(value(e, "input_vertices"), in_rendering, "{e:?}");
                in_rendering = 0;
            }
        }
    }
    assert!(draws >= 3, "{draws} draws counted");
}
