//! GPU counters (`GPU_TRACE_COUNTERS=pipeline`) where queries are hard to place: multiview
//! subpasses, secondaries executed inside a range, command buffers the layer does not
//! track between runs (simultaneous use), and traces without some tracepoints. Validation
//! beneath.

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::counter_checks::{counted, counters, named, NAMES};
use utrace_tests::harness::TempDir;
use utrace_tests::workload;

#[test]
fn a_multiview_pass_is_not_counted_where_the_driver_leaves_views_unavailable() {
    // multiview: a render pass of two views with one draw, in a one-time command buffer,
    // then in a reusable one run twice. A query begun in a multiview subpass takes one
    // query per view, and Lavapipe 22.3 leaves the second unavailable (a read says
    // NOT_READY; a copy that waits for it would never end): such subpasses are not
    // counted, their ranges say so, and the run goes on, valid and timed.
    let dir = TempDir::new("counters-multiview");
    let (run, trace) = counted(workload!("multiview"), &dir);
    assert!(run.success, "{}", run.stderr);
    assert_eq!(trace.batches.len(), 3, "{}", run.stdout);
    for batch in &trace.batches {
        let events = &batch.events;
        assert_eq!(named(events, "end_render_pass").len(), 1);
        // The draw, its pass and the command buffer say they were not measured: no
        // values, `partial=1` alone.
        for name in ["end_draw", "end_render_pass", "end_cmd_buffer"] {
            let e = named(events, name)[0];
            assert_eq!(e.arg("partial"), Some("1"), "{e:?}");
            assert!(NAMES.iter().all(|n| e.arg(n).is_none()), "{e:?}");
        }
    }
}

#[test]
fn a_multiview_pass_sums_its_views_consecutive_queries_on_lavapipe_25() {
    // The same on Lavapipe 25.0, which makes every view's query available (the total in
    // the first, 0 in the second): the range sums the two. One triangle drawn in two
    // views is 6 vertices, 2 primitives; its fragments are twice one view's (1,352 for
    // this triangle on the 64 x 64 target). The reusable command buffer's runs copy the
    // two queries into their run slot: the same sums each run.
    let dir = TempDir::new("counters-multiview-25");
    let (run, trace) = counted(workload!("multiview").on_lavapipe_25(), &dir);
    assert!(run.success, "{}", run.stderr);
    assert_eq!(trace.batches.len(), 3, "{}", run.stdout);
    for batch in &trace.batches {
        for name in ["end_draw", "end_render_pass", "end_cmd_buffer"] {
            let e = named(&batch.events, name)[0];
            let c = counters(e).unwrap_or_else(|| panic!("{name} has counters: {e:?}"));
            assert_eq!(c[..6], [6, 2, 6, 2, 2, 2 * 1352], "{name}: {c:?}");
            assert_eq!(e.arg("partial"), None, "{e:?}");
        }
    }
}

#[test]
fn a_pass_of_secondaries_says_it_was_not_measured() {
    let dir = TempDir::new("counters-secondaries");
    // secondaries: a one-time primary whose render pass's contents are secondaries (not
    // counted yet), then secondaries executed outside a render pass. The pass, and the
    // primary's sum, say that they were not measured.
    let (_, trace) = counted(workload!("secondaries"), &dir);
    let events = &trace.batches[0].events;
    let pass = named(events, "end_render_pass");
    assert_eq!(pass[0].arg("partial"), Some("1"), "{events:?}");
    assert_eq!(counters(pass[0]), None);
    let primary_end = events.last().unwrap();
    assert_eq!(primary_end.name, "end_cmd_buffer");
    assert_eq!(primary_end.arg("partial"), Some("1"), "{primary_end:?}");
}

#[test]
fn secondaries_count_inside_the_primarys_ranges_where_queries_are_inherited() {
    // secondaries, on a device that offers inheritedQueries (the test layer offers it
    // above Lavapipe, which counts a secondary's commands as its own; the validation layer
    // between sees it on): the render pass of two secondaries drawing a triangle each gets
    // a query spanning it, begun before it and ended after it, and the secondaries
    // inherit its statistics (the test layer says a secondary that does not); the secondary dispatching 64 groups of 64 outside a render
    // pass counts in its execute_commands range. The primary sums both.
    let dir = TempDir::new("counters-inherited");
    let run = workload!("secondaries")
        .layers(&[
            "VK_LAYER_utrace",
            "VK_LAYER_KHRONOS_validation",
            "VK_LAYER_UTRACE_fault",
        ])
        .env("UTRACE_INHERITED_QUERIES", "1")
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_COUNTERS", "pipeline")
        .run(&dir);
    assert_clean(&run);
    // The test layer checks the inheritance rule (Debian's validation layer does not).
    assert!(
        !run.stderr.contains("utrace-inherited: VUID"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("pipelineStatisticsQuery enabled (inheritedQueries too)"),
        "{}",
        run.stderr
    );
    let trace = assert_trace_matches(&run.stdout, &run);
    let events = &trace.batches[0].events;
    let pass = named(events, "end_render_pass")[0];
    let drawn = counters(pass).expect("the pass of secondaries is counted");
    assert_eq!(drawn[..5], [6, 2, 6, 2, 2], "{pass:?}");
    assert!(drawn[5] > 0, "{pass:?}");
    assert_eq!(pass.arg("partial"), None, "{pass:?}");
    let executes = named(events, "end_execute_commands");
    let dispatched = counters(executes.last().unwrap()).expect("the execute range's");
    assert_eq!(dispatched[6], 64 * 64, "{executes:?}");
    let primary = events.last().unwrap();
    assert_eq!(primary.name, "end_cmd_buffer");
    let sum = counters(primary).expect("the primary's sum");
    assert_eq!(sum[..6], drawn[..6], "{primary:?}");
    assert_eq!(sum[6], 64 * 64, "{primary:?}");
    assert_eq!(primary.arg("partial"), None, "{primary:?}");
}

#[test]
fn command_buffers_the_layer_does_not_track_get_each_runs_statistics() {
    // counters-simultaneous: a simultaneous-use command buffer dispatching 5 groups of 64,
    // pending twice at once, then run again; a reusable primary dispatching 2 groups and
    // executing a secondary that dispatches 3, run twice. Neither is tracked between runs:
    // each run resets its statistics at its begin and the layer's copy after it reads
    // them (query commands on one queue run in submission order), so every run shows its
    // own. Without inheritedQueries (Lavapipe) the secondary's dispatch is not counted.
    // Past its one pool's 64 queries a reusable recording's ranges say partial.
    let dir = TempDir::new("counters-simultaneous");
    let (run, trace) = counted(workload!("counters-simultaneous"), &dir);
    assert_eq!(trace.batches.len(), 6, "{}", run.stdout);
    let first: Vec<u64> = trace
        .batches
        .iter()
        .map(|b| counters(named(&b.events, "end_dispatch")[0]).unwrap()[6])
        .collect();
    assert_eq!(first, [320, 320, 320, 128, 128, 64], "{}", run.stdout);
    for b in &trace.batches[..5] {
        let end = b.events.last().unwrap();
        assert_eq!(end.name, "end_cmd_buffer");
        let sum = counters(end).expect("the command buffer's sum");
        assert_eq!(
            sum[6],
            counters(named(&b.events, "end_dispatch")[0]).unwrap()[6]
        );
    }
    // 70 dispatches: the first 64 counted (64 invocations each), the rest say they were
    // not measured, and so does the command buffer's sum of the 64; said once.
    let many = &trace.batches[5].events;
    let dispatches = named(many, "end_dispatch");
    assert_eq!(dispatches.len(), 70);
    assert!(dispatches[..64]
        .iter()
        .all(|e| counters(e).unwrap()[6] == 64));
    assert!(dispatches[64..]
        .iter()
        .all(|e| counters(e).is_none() && e.arg("partial") == Some("1")));
    let end = many.last().unwrap();
    assert_eq!(counters(end).unwrap()[6], 64 * 64, "{end:?}");
    assert_eq!(end.arg("partial"), Some("1"), "{end:?}");
    let said = "a reusable command buffer counts at most 64 ranges";
    assert_eq!(run.stderr.matches(said).count(), 1, "{}", run.stderr);
}

#[test]
fn without_command_buffer_tracepoints_each_range_keeps_its_own_statistics() {
    // GPU_TRACEPOINTS=-cmd_buffer: the command buffers' sums have no event to go on, so
    // they go nowhere (they once went on the last range, over its own values); the
    // reusable dispatch, whose start is recorded with its end, keeps its runs' 64, 128 and
    // 192 invocations; the second render pass its own 6 vertices.
    let dir = TempDir::new("counters-no-cmd-buffer");
    let run = workload!("counters")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_COUNTERS", "pipeline")
        .env("GPU_TRACEPOINTS", "-cmd_buffer")
        .run(&dir);
    assert_clean(&run);
    let trace = utrace_tests::trace_txt::parse_trace(&run.stdout).unwrap();
    let runs: Vec<u64> = trace.batches[1..]
        .iter()
        .map(|b| counters(named(&b.events, "end_dispatch_indirect")[0]).expect("counted")[6])
        .collect();
    assert_eq!(runs, [64, 128, 192], "{}", run.stdout);
    let passes = named(&trace.batches[0].events, "end_render_pass");
    assert_eq!(counters(passes[1]).unwrap()[..2], [6, 2], "{}", run.stdout);
    let dispatch = named(&trace.batches[0].events, "end_dispatch")[0];
    assert_eq!(counters(dispatch).unwrap()[6], 960, "{}", run.stdout);
}
