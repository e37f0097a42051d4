//! GPU counters on Lavapipe 25.0's newer work, with validation beneath. Mesh draws
//! (VK_EXT_mesh_shader): the layer enables `meshShaderQueries` in its copy of the
//! application's mesh shader features, and each mesh draw counts its task and mesh shader
//! invocations beside the graphics statistics. The `mesh` scenario: one task workgroup per
//! quad, each handing one mesh workgroup a quad (4 vertices, 2 triangles) of 24 x 24
//! pixels; draws of 2, 1 and 1 quads. Trace-rays (VK_KHR_ray_tracing_pipeline): Vulkan has
//! no ray tracing statistic; Lavapipe counts each ray generation invocation as a compute
//! shader invocation.

use utrace_tests::counter_checks::{counted, named};
use utrace_tests::harness::TempDir;
use utrace_tests::trace_txt::Event;
use utrace_tests::workload;

fn value(e: &Event, name: &str) -> u64 {
    e.arg(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} on {e:?}"))
}

/// (task, mesh, fragment shader invocations, clipping primitives) of `e`.
fn mesh_counts(e: &Event) -> [u64; 4] {
    [
        value(e, "task_invocations"),
        value(e, "mesh_invocations"),
        value(e, "fragment_invocations"),
        value(e, "clipping_primitives"),
    ]
}

#[test]
fn each_mesh_draw_counts_its_task_and_mesh_invocations_on_lavapipe_25() {
    let dir = TempDir::new("counters-mesh");
    let (run, trace) = counted(workload!("mesh").on_lavapipe_25(), &dir);
    assert!(
        run.stderr
            .contains("meshShaderQueries enabled: task and mesh shader invocations too"),
        "{}",
        run.stderr
    );
    let events = &trace.batches[0].events;
    let draws: Vec<[u64; 4]> = named(events, "end_draw_mesh_tasks")
        .into_iter()
        .map(mesh_counts)
        .collect();
    // A quad is 2 triangles and 24 x 24 pixels; no vertex input, no vertex shader.
    assert_eq!(draws[0], [2, 2, 2 * 576, 4], "{}", run.stdout);
    for draw in &draws[1..] {
        assert_eq!(*draw, [1, 1, 576, 2], "{}", run.stdout);
    }
    for e in named(events, "end_draw_mesh_tasks") {
        assert_eq!(value(e, "vertex_invocations"), 0, "{e:?}");
        assert_eq!(value(e, "input_vertices"), 0, "{e:?}");
    }
    // The rendering instance and the command buffer sum them.
    let quads: u64 = draws.iter().map(|d| d[0]).sum();
    let rendering = named(events, "end_rendering")[0];
    assert_eq!(
        mesh_counts(rendering),
        [quads, quads, quads * 576, quads * 2]
    );
    let end = named(events, "end_cmd_buffer")[0];
    assert_eq!(value(end, "mesh_invocations"), quads);
}

/// With a draw tracepoint off, the rendering instance is counted as a whole: its query
/// covers the mesh draws, whose statistics it holds.
#[test]
fn a_rendering_instance_counted_whole_holds_its_mesh_draws_on_lavapipe_25() {
    let dir = TempDir::new("counters-mesh-whole");
    let workload = workload!("mesh")
        .on_lavapipe_25()
        .env("GPU_TRACEPOINTS", "-draw_mesh_tasks");
    let (run, trace) = counted(workload, &dir);
    let events = &trace.batches[0].events;
    assert!(named(events, "end_draw_mesh_tasks").is_empty());
    let rendering = named(events, "end_rendering")[0];
    let quads = value(rendering, "task_invocations");
    assert!(quads >= 3, "{}", run.stdout);
    assert_eq!(
        mesh_counts(rendering),
        [quads, quads, quads * 576, quads * 2]
    );
}

/// To Perfetto: the descriptor names the nine statistics (task and mesh invocations as
/// counters 8 and 9), and each mesh draw sets them at its begin and back to 0 at its end.
#[test]
fn perfetto_counter_tracks_carry_task_and_mesh_invocations_on_lavapipe_25() {
    let dir = TempDir::new("counters-mesh-perfetto");
    let file = dir.path().join("trace.pftrace");
    let run = workload!("mesh")
        .on_lavapipe_25()
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("GPU_TRACE_COUNTERS", "pipeline")
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    let trace = utrace_tests::perfetto_trace::decode(&std::fs::read(&file).unwrap()).unwrap();
    let names: Vec<String> = utrace_tests::perfetto_trace::counter_names(&trace)
        .into_iter()
        .map(|(_, name)| name)
        .collect();
    assert_eq!(names.len(), 9, "{names:?}");
    assert_eq!(names[7..], ["task_invocations", "mesh_invocations"]);
    for id in [8, 9] {
        let values: Vec<i64> = utrace_tests::perfetto_trace::counter_samples(&trace, id)
            .iter()
            .map(|s| s.1.int_value.unwrap_or(0))
            .collect();
        assert_eq!(values, [2, 0, 1, 0, 1, 0], "counter {id}");
    }
}

/// The `raytracing` scenario traces 64 x 64 rays twice (direct, then indirect): each
/// trace-rays range shows the compute statistic alone, one invocation per ray.
#[test]
fn trace_rays_count_their_ray_generation_invocations_as_compute_on_lavapipe_25() {
    let dir = TempDir::new("counters-rays");
    let (run, trace) = counted(workload!("raytracing").on_lavapipe_25(), &dir);
    let rays: Vec<&Event> = trace
        .batches
        .iter()
        .flat_map(|b| named(&b.events, "end_trace_rays"))
        .collect();
    assert_eq!(rays.len(), 2, "{}", run.stdout);
    for e in rays {
        assert_eq!(value(e, "compute_invocations"), 64 * 64, "{e:?}");
        assert_eq!(
            e.arg("fragment_invocations"),
            None,
            "the compute statistic alone"
        );
    }
}
