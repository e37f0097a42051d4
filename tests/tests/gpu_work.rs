//! Every kind of GPU work, traced: one run of the `all-gpu-work` scenario (render passes,
//! dynamic rendering with suspend/resume, secondaries, compute, transfers, labels) under the
//! layer with validation beneath, checked per scenario.

use std::sync::OnceLock;

use utrace_tests::checks::{assert_clean, assert_trace_matches, named};
use utrace_tests::harness::{Run, TempDir, SYNC_VALIDATION};
use utrace_tests::trace_txt::{Batch, Event, Trace};
use utrace_tests::workload;

/// The run and its trace, shared by the tests of this file (one process does all the work).
fn traced() -> &'static (Run, Trace) {
    static RUN: OnceLock<(Run, Trace)> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = TempDir::new("gpu-work");
        let run = workload!("all-gpu-work")
            .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
            .env("GPU_TRACE", "1")
            .env("VK_LAYER_ENABLES", SYNC_VALIDATION)
            .run(&dir);
        assert_clean(&run);
        let trace = assert_trace_matches(&run.stdout, &run);
        (run, trace)
    })
}

/// The batch of the submission labelled `label`.
fn batch(label: &str) -> &'static Batch {
    let (run, trace) = traced();
    let index = run.report().devices[0]
        .submissions
        .iter()
        .position(|s| s.label == label)
        .unwrap_or_else(|| panic!("no submission {label}"));
    &trace.batches[index]
}

/// The one event named `name` in `batch`.
fn one<'a>(batch: &'a Batch, name: &str) -> &'a Event {
    let found = named(batch, name);
    assert_eq!(
        found.len(),
        1,
        "{name} once in batch {}: {:#?}",
        batch.number,
        batch.events
    );
    found[0]
}

fn args(e: &Event, want: &[(&str, &str)]) {
    for (k, v) in want {
        assert_eq!(e.arg(k), Some(*v), "{}: {k}", e.name);
    }
}

/// The events from `first` to `last` (inclusive), which `first` opens.
fn inside<'a>(batch: &'a Batch, open: &Event, close: &Event) -> Vec<&'a Event> {
    batch
        .events
        .iter()
        .filter(|e| e.ns >= open.ns && e.ns <= close.ns && e.depth > open.depth)
        .collect()
}

#[test]
fn render_pass_with_every_draw() {
    let b = batch("render-pass");
    let start = one(b, "start_render_pass");
    args(
        start,
        &[
            ("width", "64"),
            ("height", "64"),
            ("attachments", "2"),
            ("subpasses", "1"),
            ("color_format", "R8G8B8A8_UNORM"),
            ("depth_format", "D32_SFLOAT"),
            ("load_op", "clear"),
            ("store_op", "store"),
            ("samples", "1"),
            ("view_mask", "0x0"),
            ("contents", "inline"),
        ],
    );
    let end = one(b, "end_render_pass");
    args(
        one(b, "start_draw"),
        &[("vertex_count", "3"), ("instance_count", "1")],
    );
    args(
        one(b, "start_draw_indexed"),
        &[("index_count", "3"), ("instance_count", "2")],
    );
    let indirect = named(b, "start_draw_indirect");
    assert_eq!(indirect.len(), 2);
    args(
        indirect[0],
        &[
            ("indexed", "false"),
            ("draw_count", "2"),
            ("stride", "16"),
            ("offset", "0"),
        ],
    );
    args(
        indirect[1],
        &[
            ("indexed", "true"),
            ("draw_count", "1"),
            ("stride", "20"),
            ("offset", "32"),
        ],
    );
    let counted = named(b, "start_draw_indirect_count");
    assert_eq!(counted.len(), 2);
    args(
        counted[0],
        &[
            ("indexed", "false"),
            ("max_draw_count", "2"),
            ("count_offset", "64"),
        ],
    );
    args(
        counted[1],
        &[
            ("indexed", "true"),
            ("max_draw_count", "1"),
            ("count_offset", "68"),
        ],
    );
    args(
        one(b, "start_draw_multi"),
        &[("indexed", "false"), ("draw_count", "2")],
    );
    // Every draw is inside the render pass, and every range is closed.
    let draws = inside(b, start, end);
    assert_eq!(draws.len(), 14, "seven draws, begin and end: {draws:#?}");
    assert!(draws.iter().all(|e| e.depth == 2));
    for prefix in [
        "draw",
        "draw_indexed",
        "draw_indirect",
        "draw_indirect_count",
        "draw_multi",
    ] {
        assert_eq!(
            named(b, &format!("start_{prefix}")).len(),
            named(b, &format!("end_{prefix}")).len()
        );
    }
}

#[test]
fn render_pass2_with_two_subpasses() {
    let b = batch("render-pass2");
    args(
        one(b, "start_render_pass"),
        &[
            ("subpasses", "2"),
            ("attachments", "1"),
            ("depth_format", "UNDEFINED"),
        ],
    );
    let next = one(b, "next_subpass");
    args(next, &[("subpass", "1"), ("contents", "inline")]);
    let draws = named(b, "start_draw");
    assert_eq!(draws.len(), 2);
    assert!(
        draws[0].ns <= next.ns && next.ns <= draws[1].ns,
        "one draw per subpass"
    );
    one(b, "end_render_pass");
}

#[test]
fn dynamic_rendering() {
    let b = batch("dynamic-rendering");
    args(
        one(b, "start_rendering"),
        &[
            ("width", "64"),
            ("color_attachments", "1"),
            ("color_format", "R8G8B8A8_UNORM"),
            ("depth_format", "D32_SFLOAT"),
            ("load_op", "clear"),
            ("flags", "none"),
        ],
    );
    args(one(b, "end_rendering"), &[("suspending", "false")]);
    assert_eq!(named(b, "start_draw").len(), 2);
}

#[test]
fn suspended_in_one_command_buffer_resumed_in_the_next() {
    let b = batch("suspend-resume");
    let (run, _) = traced();
    let sub = run.report().devices[0]
        .submissions
        .iter()
        .find(|s| s.label == "suspend-resume")
        .unwrap();
    let starts = named(b, "start_rendering");
    let ends = named(b, "end_rendering");
    assert_eq!((starts.len(), ends.len()), (2, 2));
    args(starts[0], &[("flags", "suspending")]);
    args(starts[1], &[("flags", "resuming")]);
    args(ends[0], &[("suspending", "true")]);
    args(ends[1], &[("suspending", "false")]);
    // Nothing may be written between the suspension and the resumption: the first command
    // buffer's end shares the suspending end's timestamp, the second's start follows it.
    let cb_ends = named(b, "end_cmd_buffer");
    let cb_starts = named(b, "start_cmd_buffer");
    assert_eq!(cb_ends[0].arg("cmd"), Some(sub.cmdbufs[0].as_str()));
    assert_eq!(
        cb_ends[0].ns, ends[0].ns,
        "end of the suspending command buffer"
    );
    assert_eq!(cb_starts[1].arg("cmd"), Some(sub.cmdbufs[1].as_str()));
    assert!(cb_starts[1].ns >= ends[0].ns);
    assert!(starts[1].ns >= cb_starts[1].ns);
    // One query less than events: the shared timestamp.
    assert_eq!(b.queries as usize, b.events.len() - 1);
}

#[test]
fn secondaries_inside_and_outside_a_render_pass() {
    let b = batch("secondaries");
    let (run, _) = traced();
    let sub = run.report().devices[0]
        .submissions
        .iter()
        .find(|s| s.label == "secondaries")
        .unwrap();
    assert_eq!(sub.secondaries.len(), 3);
    let start = one(b, "start_render_pass");
    args(start, &[("contents", "secondary_command_buffers")]);
    let end = one(b, "end_render_pass");
    let secondaries: Vec<&Event> = named(b, "start_cmd_buffer")
        .into_iter()
        .filter(|e| e.arg("level") == Some("secondary"))
        .collect();
    assert_eq!(secondaries.len(), 3);
    for (e, cmd) in secondaries.iter().zip(&sub.secondaries) {
        assert_eq!(
            e.arg("cmd"),
            Some(cmd.as_str()),
            "secondaries in execution order"
        );
    }
    // The two drawing secondaries run inside the render pass, with their draws inside them;
    // the primary writes nothing of its own there (its contents are secondaries).
    for s in &secondaries[..2] {
        assert_eq!(s.depth, 2);
        assert!(start.ns <= s.ns && s.ns <= end.ns);
        args(s, &[("usage", "render_pass_continue")]);
    }
    assert_eq!(
        named(b, "start_draw")
            .iter()
            .map(|d| d.depth)
            .collect::<Vec<_>>(),
        vec![3, 3]
    );
    // The dispatching one runs outside, inside the primary's execute_commands range.
    let execute = one(b, "start_execute_commands");
    args(execute, &[("count", "1")]);
    assert_eq!(secondaries[2].depth, 2);
    assert!(secondaries[2].ns >= execute.ns);
    assert_eq!(one(b, "start_dispatch").depth, 3);
}

#[test]
fn every_dispatch() {
    let b = batch("compute");
    let dispatches = named(b, "start_dispatch");
    assert_eq!(dispatches.len(), 2);
    args(dispatches[0], &[("group_count_x", "64"), ("base_x", "0")]);
    args(dispatches[1], &[("group_count_x", "63"), ("base_x", "1")]);
    args(one(b, "start_dispatch_indirect"), &[("offset", "0")]);
}

#[test]
fn every_transfer() {
    let v1 = batch("transfers");
    for name in [
        "copy_buffer",
        "copy_image",
        "copy_buffer_to_image",
        "copy_image_to_buffer",
        "blit_image",
        "resolve_image",
        "clear_color_image",
        "clear_depth_stencil_image",
        "fill_buffer",
        "update_buffer",
    ] {
        one(v1, &format!("start_{name}"));
        one(v1, &format!("end_{name}"));
    }
    args(
        one(v1, "start_copy_buffer"),
        &[("regions", "1"), ("size", "16384")],
    );
    args(
        one(v1, "start_copy_image"),
        &[
            ("width", "64"),
            ("height", "64"),
            ("src_format", "R8G8B8A8_UNORM"),
        ],
    );
    args(
        one(v1, "start_blit_image"),
        &[("filter", "linear"), ("dst_format", "R8G8B8A8_UNORM")],
    );
    args(one(v1, "start_resolve_image"), &[("samples", "4")]);
    args(
        one(v1, "start_clear_depth_stencil_image"),
        &[("format", "D32_SFLOAT")],
    );
    args(one(v1, "start_fill_buffer"), &[("size", "64")]);
    args(one(v1, "start_update_buffer"), &[("size", "4")]);

    let v2 = batch("transfers2");
    for name in [
        "copy_buffer",
        "copy_image",
        "copy_buffer_to_image",
        "copy_image_to_buffer",
        "blit_image",
        "resolve_image",
    ] {
        one(v2, &format!("start_{name}"));
    }
    args(one(v2, "start_blit_image"), &[("filter", "nearest")]);
    let clear = one(v2, "start_clear_attachments");
    args(clear, &[("attachments", "1"), ("rects", "1")]);
    assert_eq!(clear.depth, 2, "inside its render pass");
}

#[test]
fn labels_nest_and_survive_odd_names() {
    let b = batch("labels");
    let begins = named(b, "begin_label");
    let names: Vec<&str> = begins.iter().map(|e| e.arg("label").unwrap()).collect();
    assert_eq!(&names[..3], &["frame", "shadow pass", "cascade 0"]);
    assert_eq!(
        begins.iter().take(3).map(|e| e.depth).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert_eq!(
        named(b, "start_dispatch")[0].depth,
        4,
        "the dispatch inside three labels"
    );
    let ends: Vec<&str> = named(b, "end_label")
        .iter()
        .map(|e| e.arg("label").unwrap())
        .collect();
    assert_eq!(
        &ends[..3],
        &["cascade 0", "shadow pass", "frame"],
        "each end names the label it closes"
    );
    let marker = named(b, "insert_label");
    assert_eq!(marker[0].arg("label"), Some("marker: after cascade"));
    assert_eq!(
        marker[0].depth, 3,
        "inside the command buffer, frame and shadow pass"
    );
    // A 1000-character label is cut to 256 bytes, the last three the mark of the cut.
    assert_eq!(names[3], "x".repeat(253) + "…");
    // Bytes that are not UTF-8 come out as U+FFFD, the rest intact.
    assert_eq!(names[4], "bad \u{fffd}\u{fffd} label");
    // VK_EXT_debug_marker markers (the validation layer provides the extension).
    assert_eq!(names[5], "debug marker");
    assert_eq!(marker[1].arg("label"), Some("inserted marker"));
}

#[test]
fn a_label_spanning_two_submissions() {
    let opens = batch("label-opens");
    let closes = batch("label-closes");
    args(
        one(opens, "begin_label"),
        &[("label", "spans command buffers")],
    );
    assert!(named(opens, "end_label").is_empty());
    // Closed in a later command buffer: the end is traced, with no name of its own, and the
    // command buffer's own end still closes at depth 0.
    let end = one(closes, "end_label");
    args(end, &[("label", "")]);
    assert_eq!(end.depth, 1);
    assert!(end.ns >= one(opens, "begin_label").ns);
}
