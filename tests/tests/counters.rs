//! GPU counters (`GPU_TRACE_COUNTERS=pipeline`): the pipeline statistics each range gets,
//! checked against the work the scenarios recorded, with validation beneath.

use utrace_tests::checks::{assert_clean, assert_trace_matches};
use utrace_tests::counter_checks::{counted, counters, named, NAMES};
use utrace_tests::harness::{Run, TempDir};
use utrace_tests::trace_txt::{Event, Trace};
use utrace_tests::workload;

#[test]
fn each_range_counts_exactly_the_work_recorded_in_it() {
    let dir = TempDir::new("counters-values");
    let (run, trace) = counted(workload!("counters"), &dir);
    check_counters_scenario(&run, &trace);
}

#[test]
fn each_range_counts_exactly_the_work_recorded_in_it_on_lavapipe_25() {
    let dir = TempDir::new("counters-values-25");
    let (run, trace) = counted(workload!("counters").on_lavapipe_25(), &dir);
    check_counters_scenario(&run, &trace);
}

/// The `counters` scenario's trace holds exactly the statistics of its work.
fn check_counters_scenario(run: &Run, trace: &Trace) {
    assert_eq!(trace.batches.len(), 4, "{}", run.stdout);
    let events = &trace.batches[0].events;
    let passes = named(events, "end_render_pass");
    assert_eq!(passes.len(), 2);
    // One draw of 6 vertices and 4 instances: 24 vertices, 8 triangles, each shaded once
    // (a non-indexed draw reuses no vertex), none clipped away.
    let first = counters(passes[0]).expect("the render pass's counters");
    assert_eq!(first[..5], [24, 8, 24, 8, 8], "{first:?}");
    // Fragments: some, at most one per pixel of the 64x64 target and instance.
    assert!(first[5] > 0 && first[5] <= 4 * 64 * 64, "{first:?}");
    assert_eq!(first[6], 0, "a render pass shows no compute statistic");
    // Two subpasses, one triangle each: their two queries summed.
    let second = counters(passes[1]).expect("the two-subpass pass's counters");
    assert_eq!(second[..5], [6, 2, 6, 2, 2], "{second:?}");
    // A dispatch of 5 x 3 x 1 groups of 64.
    let dispatches = named(events, "end_dispatch");
    assert_eq!(dispatches.len(), 1);
    let dispatch = counters(dispatches[0]).expect("the dispatch's counters");
    assert_eq!(dispatch, [0, 0, 0, 0, 0, 0, 960]);
    // The command buffer: the sum of the ranges inside it, every statistic shown.
    let end = named(events, "end_cmd_buffer");
    let sum: Vec<u64> = (0..7).map(|i| first[i] + second[i] + dispatch[i]).collect();
    assert_eq!(
        counters(end[0]).expect("the command buffer's sum").to_vec(),
        sum
    );
    for name in NAMES {
        assert!(
            end[0].arg(name).is_some(),
            "{name} shown on the command buffer"
        );
    }
    // Starts carry none; each draw (traced by default) its own, which its pass sums.
    for e in events.iter().filter(|e| e.name.starts_with("start_")) {
        assert_eq!(counters(e), None, "{e:?}");
    }
    let draws: Vec<[u64; 7]> = named(events, "end_draw")
        .iter()
        .map(|e| counters(e).expect("a draw's counters"))
        .collect();
    assert_eq!(draws.len(), 3);
    assert_eq!(draws[0], first, "one draw: its pass's");
    assert_eq!(draws[1][..5], [3, 1, 3, 1, 1]);
    assert_eq!(draws[2][..5], [3, 1, 3, 1, 1]);
    assert_eq!(
        draws[1][5] + draws[2][5],
        second[5],
        "the pass sums its draws"
    );
    // The reusable command buffer, run with 1, 2, then 3 groups (each run read from the
    // run slot it copies itself into): each run's own.
    let runs: Vec<u64> = trace.batches[1..]
        .iter()
        .map(|b| {
            let e = named(&b.events, "end_dispatch_indirect");
            counters(e[0]).expect("a run's counters")[6]
        })
        .collect();
    assert_eq!(runs, [64, 128, 192]);
}

#[test]
fn with_draws_not_traced_render_passes_count_their_subpasses() {
    // One draw tracepoint off: subpasses are counted (the draws of that kind would be
    // left out otherwise), the draws of the others not at all; the passes' values stay.
    let dir = TempDir::new("counters-subpasses");
    let (_, trace) = counted(
        workload!("counters").env("GPU_TRACEPOINTS", "-draw_indexed"),
        &dir,
    );
    let events = &trace.batches[0].events;
    assert!(named(events, "end_draw")
        .iter()
        .all(|e| counters(e).is_none()));
    let passes = named(events, "end_render_pass");
    assert_eq!(counters(passes[0]).unwrap()[..5], [24, 8, 24, 8, 8]);
    assert_eq!(counters(passes[1]).unwrap()[..5], [6, 2, 6, 2, 2]);
}

#[test]
fn a_reusable_command_buffer_not_read_from_its_slot_gets_none_and_stays_valid() {
    // Without run slots (a debug switch: as where memory is short or the family cannot
    // copy) a reusable run is not read: its ranges get no counters, and its statistics
    // queries, reset by each run, stay valid (validation beneath).
    let dir = TempDir::new("counters-no-slots");
    let (_, trace) = counted(
        workload!("counters").env("UTRACE_DEBUG_NO_RUN_SLOTS", "1"),
        &dir,
    );
    assert!(counters(named(&trace.batches[0].events, "end_dispatch")[0]).is_some());
    for b in &trace.batches[1..] {
        assert!(
            b.events.iter().all(|e| counters(e).is_none()),
            "{:?}",
            b.events
        );
    }
}

#[test]
fn dispatches_count_their_groups_invocations_and_suspended_passes_each_part() {
    let dir = TempDir::new("counters-compute");
    let (_, trace) = counted(workload!("compute"), &dir);
    // vkCmdDispatch of 64 groups, the indirect one of 64, vkCmdDispatchBase of 63 (64
    // invocations a group).
    let seen: Vec<u64> = trace.batches[0]
        .events
        .iter()
        .filter(|e| e.name.starts_with("end_dispatch"))
        .map(|e| counters(e).expect("a dispatch's counters")[6])
        .collect();
    assert_eq!(seen, [4096, 4096, 4032]);
    // Dynamic rendering: two draws (3 vertices, then 3 x 2 instances) in one instance;
    // an instance suspended in one command buffer and resumed in the next spans both,
    // which one query cannot: each part (a triangle each) is counted in its own command
    // buffer, its queries begun and ended inside it.
    let dir = TempDir::new("counters-dynamic");
    let (_, trace) = counted(workload!("dynamic-rendering"), &dir);
    let ends: Vec<&Event> = trace
        .batches
        .iter()
        .flat_map(|b| named(&b.events, "end_rendering"))
        .collect();
    let whole = counters(ends[0]).expect("the whole instance's counters");
    assert_eq!(whole[..3], [9, 3, 9], "{whole:?}");
    let parts: Vec<[u64; 7]> = ends[1..]
        .iter()
        .map(|e| counters(e).expect("a part's"))
        .collect();
    assert_eq!(parts.len(), 2, "{ends:?}");
    for part in parts {
        assert_eq!(part[..3], [3, 1, 3], "{ends:?}");
    }
}

#[test]
fn without_the_setting_no_range_has_counters() {
    let dir = TempDir::new("counters-unset");
    let run = workload!("counters")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACE", "1")
        .run(&dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&run.stdout, &run);
    assert!(trace
        .batches
        .iter()
        .flat_map(|b| &b.events)
        .all(|e| counters(e).is_none()));
}

#[test]
fn json_gives_the_counters_as_numbers_of_the_ranges_args() {
    let dir = TempDir::new("counters-json");
    let run = workload!("counters")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE", "1")
        .env("GPU_TRACE_FORMAT", "json")
        .env("GPU_TRACE_COUNTERS", "pipeline")
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert!(
        run.stdout
            .contains(r#""name":"end_dispatch","args":{"compute_invocations":960}}"#),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            r#""args":{"input_vertices":24,"input_primitives":8,"vertex_invocations":24,"#
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn the_applications_own_statistics_stay_right_and_the_ranges_they_overlap_are_partial() {
    // counters-own-query: the application's query around a render pass of 24 vertex
    // invocations, and one inside a render pass around the middle of three draws (6, 3 and
    // 6). The workload fails unless its own queries read 24 and 3; validation beneath
    // checks that no two statistics queries were ever active together. It enables
    // pipelineStatisticsQuery itself (`--statistics`), as such an application must: it is
    // valid without the layer, which then finds the feature on already.
    let dir = TempDir::new("counters-own-query-alone");
    let alone = workload!("counters-own-query")
        .arg("--statistics", "")
        .layers(&["VK_LAYER_KHRONOS_validation"])
        .run(&dir);
    assert_clean(&alone);
    let dir = TempDir::new("counters-own-query");
    let (run, trace) = counted(
        workload!("counters-own-query").arg("--statistics", ""),
        &dir,
    );
    assert!(run.success, "{}", run.stderr);
    let events = &trace.batches[0].events;
    let passes = named(events, "end_render_pass");
    // The first range lay wholly inside the application's query: no values, partial.
    assert_eq!(counters(passes[0]), None);
    assert_eq!(passes[0].arg("partial"), Some("1"));
    // The second gave way for the middle draw and went on: 6 + 6 vertices, partial.
    let second = counters(passes[1]).expect("the second pass's counters");
    assert_eq!(second[..3], [12, 4, 12], "{second:?}");
    assert_eq!(passes[1].arg("partial"), Some("1"));
    let end = named(events, "end_cmd_buffer");
    assert_eq!(end[0].arg("partial"), Some("1"));
    let said = "an application's own pipeline statistics query overlapped a counted range";
    assert_eq!(run.stderr.matches(said).count(), 1, "{}", run.stderr);
}

#[test]
fn a_reusable_command_buffer_whose_statistics_do_not_fit_its_slot_says_so() {
    // counters-unread: a reusable command buffer of 40 dispatches, submitted once: 40
    // queries of 7 values do not fit the run slot after its timestamps. Its ranges get
    // none, it runs valid, and why is said once.
    let dir = TempDir::new("counters-unread");
    let (run, trace) = counted(workload!("counters-unread"), &dir);
    assert!(trace
        .batches
        .iter()
        .flat_map(|b| &b.events)
        .all(|e| counters(e).is_none()));
    let said = "do not fit its run slot";
    assert_eq!(run.stderr.matches(said).count(), 1, "{}", run.stderr);
}

/// A full-screen triangle over the 64 x 64 target: 3 vertices, 1 primitive that clipping
/// turns into 3 (the part inside the viewport, the whole target, drawn as a fan of three
/// triangles, one of them empty), and the fragment shader invocations the driver counts
/// for W x H pixels (docs/formats.md).
fn full_screen_fragments(on_25: bool) -> u64 {
    let dir = TempDir::new("counters-full-screen");
    let mut workload = workload!("counters-full-screen");
    if on_25 {
        workload = workload.on_lavapipe_25();
    }
    let (run, trace) = counted(workload, &dir);
    let events = &trace.batches[0].events;
    let draw = counters(named(events, "end_draw")[0]).expect("the draw's counters");
    assert_eq!(draw[..5], [3, 1, 3, 1, 3], "{}", run.stdout);
    let pass = counters(named(events, "end_render_pass")[0]).expect("the pass's counters");
    assert_eq!(pass, draw, "one draw: its pass's");
    draw[5]
}

/// Lavapipe 22.3 counts W x H + 256: the pixels along the diagonal the fan's two halves
/// share are counted for both, 256 being 16 blocks of 4 x 4 pixels along a 64-pixel
/// diagonal.
#[test]
fn a_full_screen_triangle_counts_each_pixel_and_the_seams_blocks_twice_on_lavapipe_22() {
    assert_eq!(full_screen_fragments(false), 64 * 64 + 256);
}

/// Lavapipe 25.0 counts W x H: each pixel shaded once.
#[test]
fn a_full_screen_triangle_shades_each_pixel_once_on_lavapipe_25() {
    assert_eq!(full_screen_fragments(true), 64 * 64);
}

/// An indexed draw of 12 indices over 4 distinct vertices: input assembly reads every
/// index (12 vertices, 4 triangles); the vertex shader runs at least once per distinct
/// vertex and at most once per index (Lavapipe 22.3 and 25.0: 4, each
/// distinct vertex once).
fn indexed(on_25: bool) -> [u64; 7] {
    let dir = TempDir::new("counters-indexed");
    let mut workload = workload!("counters-indexed");
    if on_25 {
        workload = workload.on_lavapipe_25();
    }
    let (run, trace) = counted(workload, &dir);
    let events = &trace.batches[0].events;
    let draw = counters(named(events, "end_draw_indexed")[0]).expect("the draw's counters");
    assert_eq!(draw[..2], [12, 4], "{}", run.stdout);
    assert!((4..=12).contains(&draw[2]), "{}", run.stdout);
    draw
}

#[test]
fn an_indexed_draw_shades_at_least_its_distinct_vertices() {
    indexed(false);
}

#[test]
fn an_indexed_draw_shades_at_least_its_distinct_vertices_on_lavapipe_25() {
    indexed(true);
}
