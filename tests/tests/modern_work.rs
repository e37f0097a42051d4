//! The GPU work modern renderers spend their frames on, traced on Lavapipe 25.0 (Vulkan 1.4):
//! acceleration-structure builds and copies, ray tracing, mesh shading, shader objects,
//! device-generated commands and conditional rendering, each scenario of the workload run
//! once with the txt trace on stdout and Perfetto to a file. Validation runs beneath the
//! layer where Debian 12's validation layer (1.3.239) knows the extension: not for shader
//! objects, generated commands and maintenance5-6, which it predates.

use std::process::Command;

use utrace_tests::checks::{assert_clean, assert_trace_matches, named, report_rows};
use utrace_tests::harness::{utrace_exe, Run, TempDir, LAVAPIPE_ICD};
use utrace_tests::perfetto_trace::{self, Resolved};
use utrace_tests::stage_ranges::{perfetto_ranges, txt_ranges};
use utrace_tests::trace_txt::{Batch, Event, Trace};
use utrace_tests::workload;

/// One traced run: the workload's report, the txt trace, the Perfetto trace, and the
/// directory holding the Perfetto file (for `utrace report`).
struct Traced {
    run: Run,
    txt: Trace,
    perfetto: Resolved,
    dir: TempDir,
}

impl Traced {
    /// The batch of the submission labelled `label`.
    fn batch(&self, label: &str) -> &Batch {
        let index = self.run.report().devices[0]
            .submissions
            .iter()
            .position(|s| s.label == label)
            .unwrap_or_else(|| panic!("no submission {label}"));
        &self.txt.batches[index]
    }

    /// `utrace report --by pipeline --json` of the txt trace: each row's key and count.
    fn report_by_pipeline(&self) -> Vec<(String, u64)> {
        let path = self.dir.path().join("gpu.txt");
        std::fs::write(&path, &self.run.stdout).expect("the txt trace");
        let out = Command::new(utrace_exe())
            .args(["report", "--by", "pipeline", "--json"])
            .arg(&path)
            .output()
            .expect("utrace runs");
        report_rows(&out).1
    }
}

/// Runs `scenario` under the layer on `icd` (validation beneath when `validation`), and
/// checks what every trace of this file must show: the results right and validation silent;
/// one batch per submission, each command buffer's events inside its submission's CPU
/// window and well nested (`assert_trace_matches`); every range of the txt trace a Perfetto
/// stage with the same times and arguments, and nothing else.
fn traced_on(icd: &str, scenario: &str, validation: bool) -> Traced {
    let dir = TempDir::new(scenario);
    let file = dir.path().join("gpu.pftrace");
    let layers: &[&str] = if validation {
        &["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"]
    } else {
        &["VK_LAYER_utrace"]
    };
    let run = workload!(scenario)
        .layers(layers)
        .env("VK_DRIVER_FILES", icd)
        .env("GPU_TRACE_FORMAT", "txt,perfetto")
        .env("GPU_TRACEFILE", file.to_str().expect("a UTF-8 path"))
        .run(&dir);
    assert_clean(&run);
    let txt = assert_trace_matches(&run.stdout, &run);
    let perfetto = perfetto_trace::read(&file);
    let names = perfetto_trace::stage_names();
    let mut expected: Vec<_> = txt
        .batches
        .iter()
        .flat_map(|b| txt_ranges(b, &names))
        .collect();
    let mut got = perfetto_ranges(&perfetto.stages);
    expected.sort();
    got.sort();
    assert_eq!(got, expected, "{scenario}: Perfetto stages = txt ranges");
    Traced {
        run,
        txt,
        perfetto,
        dir,
    }
}

fn traced(scenario: &str, validation: bool) -> Traced {
    let icd = utrace_tests::harness::lavapipe_25_icd();
    traced_on(icd.to_str().expect("a UTF-8 path"), scenario, validation)
}

/// The events of `batch` named `name`, `count` of them.
fn all<'a>(batch: &'a Batch, name: &str, count: usize) -> Vec<&'a Event> {
    let found = named(batch, name);
    assert_eq!(
        found.len(),
        count,
        "{name} in batch {}: {:#?}",
        batch.number,
        batch.events
    );
    found
}

fn args(e: &Event, want: &[(&str, &str)]) {
    for (k, v) in want {
        assert_eq!(e.arg(k), Some(*v), "{}: {k} in {:?}", e.name, e.args);
    }
}

/// The range `range` opened by `start` closes later in `batch`, after taking some GPU
/// time, one level in from the command buffer at least.
fn closes_later(batch: &Batch, start: &Event, range: &str) {
    let end = batch
        .events
        .iter()
        .find(|e| e.name == format!("end_{range}") && e.ns >= start.ns && e.depth == start.depth)
        .unwrap_or_else(|| panic!("{range} at {} is closed: {:#?}", start.ns, batch.events));
    assert!(
        end.ns > start.ns,
        "{range} takes time: {} .. {}",
        start.ns,
        end.ns
    );
    assert!(start.depth >= 1, "{range} is inside its command buffer");
}

/// The Perfetto category of the stages named `stage` (0 other, 1 graphics, 2 compute).
fn category(t: &Traced, stage: &str) -> i32 {
    let s = t.perfetto.stages.iter().find(|s| s.name == stage);
    s.unwrap_or_else(|| panic!("no stage {stage}")).category
}

#[test]
fn raytracing_builds_compacts_and_traces_rays() {
    let t = traced("raytracing", true);
    let blas = t.batch("rt blas");
    let build = all(blas, "start_build_acceleration_structures", 1)[0];
    args(
        build,
        &[
            ("level", "bottom_level"),
            ("mode", "build"),
            ("infos", "1"),
            ("geometries", "2"),
            ("primitives", "3"),
            ("flags", "allow_compaction|prefer_fast_trace"),
        ],
    );
    closes_later(blas, build, "build_acceleration_structures");
    let props = all(blas, "start_write_acceleration_structures_properties", 1)[0];
    args(
        props,
        &[
            ("count", "1"),
            ("query_type", "acceleration_structure_compacted_size_khr"),
        ],
    );
    closes_later(blas, props, "write_acceleration_structures_properties");

    let tlas = t.batch("rt compact+tlas");
    let copy = all(tlas, "start_copy_acceleration_structure", 1)[0];
    args(copy, &[("mode", "compact")]);
    closes_later(tlas, copy, "copy_acceleration_structure");
    let build = all(tlas, "start_build_acceleration_structures", 1)[0];
    args(
        build,
        &[
            ("level", "top_level"),
            ("mode", "build"),
            ("geometries", "1"),
            ("primitives", "2"),
            ("flags", "allow_update|prefer_fast_trace"),
        ],
    );

    let frame = t.batch("rt frame");
    let update = all(frame, "start_build_acceleration_structures", 1)[0];
    args(update, &[("level", "top_level"), ("mode", "update")]);
    let rays = all(frame, "start_trace_rays", 1)[0];
    args(
        rays,
        &[
            ("width", "64"),
            ("height", "64"),
            ("depth", "1"),
            ("indirect", "false"),
            ("pipeline_name", "shadow rays"),
        ],
    );
    closes_later(frame, rays, "trace_rays");
    let indirect = all(t.batch("rt indirect"), "start_trace_rays", 1)[0];
    args(
        indirect,
        &[("indirect", "true"), ("pipeline_name", "shadow rays")],
    );

    // Rays and builds are compute work in Perfetto.
    assert_eq!(category(&t, "Trace Rays"), 2);
    assert_eq!(category(&t, "Build Acceleration Structures"), 2);
    let report = t.report_by_pipeline();
    assert!(
        report.contains(&("shadow rays".to_string(), 2)),
        "both ray traces grouped by their pipeline: {report:?}"
    );
}

#[test]
fn mesh_draws_direct_and_indirect() {
    let t = traced("mesh", true);
    let b = t.batch("mesh");
    let draws = all(b, "start_draw_mesh_tasks", 3);
    args(
        draws[0],
        &[
            ("group_count_x", "2"),
            ("group_count_y", "1"),
            ("group_count_z", "1"),
            ("pipeline_name", "mesh triangles"),
        ],
    );
    for d in &draws[1..] {
        args(d, &[("draw_count", "1"), ("stride", "12")]);
    }
    let rendering = all(b, "start_rendering", 1)[0];
    for d in &draws {
        assert_eq!(
            d.depth,
            rendering.depth + 1,
            "mesh draws inside the rendering"
        );
        closes_later(b, d, "draw_mesh_tasks");
    }
    assert_eq!(category(&t, "Mesh Draw"), 1);
}

#[test]
fn shader_objects_name_their_draws_and_dispatches() {
    let t = traced("shader_objects", false);
    let b = t.batch("shader objects");
    for d in all(b, "start_draw", 2) {
        args(
            d,
            &[
                ("vertex_count", "3"),
                ("pipeline_name", "triangle vs + triangle fs"),
            ],
        );
        closes_later(b, d, "draw");
    }
    let dispatch = all(b, "start_dispatch", 1)[0];
    args(
        dispatch,
        &[("group_count_x", "4"), ("pipeline_name", "fill cs")],
    );
    let report = t.report_by_pipeline();
    assert_eq!(
        report,
        [
            ("fill cs".to_string(), 1),
            ("triangle vs + triangle fs".to_string(), 2)
        ],
        "report --by pipeline groups by shader objects"
    );
    // Perfetto carries the names too (the set's own entry is the layer's, not sent).
    let draw_stage = t
        .perfetto
        .stages
        .iter()
        .find(|s| s.name == "Draw")
        .expect("a Draw");
    assert!(
        draw_stage
            .args
            .contains(&("pipeline_name".into(), "triangle vs + triangle fs".into())),
        "{:?}",
        draw_stage.args
    );
    assert!(t.perfetto.names.iter().all(|n| n.object_type >= 0));
}

#[test]
fn generated_commands_execute_with_and_without_preprocessing() {
    let t = traced("generated_commands", false);
    let plain = t.batch("dgc");
    let exec = all(plain, "start_execute_generated_commands", 1)[0];
    args(
        exec,
        &[
            ("max_sequence_count", "3"),
            ("preprocessed", "false"),
            ("pipeline_name", "generated fill"),
        ],
    );
    closes_later(plain, exec, "execute_generated_commands");
    assert!(named(plain, "start_preprocess_generated_commands").is_empty());

    let pre = t.batch("dgc preprocessed");
    let preprocess = all(pre, "start_preprocess_generated_commands", 1)[0];
    args(preprocess, &[("max_sequence_count", "3")]);
    closes_later(pre, preprocess, "preprocess_generated_commands");
    let exec = all(pre, "start_execute_generated_commands", 1)[0];
    args(
        exec,
        &[
            ("preprocessed", "true"),
            ("layout", preprocess.arg("layout").unwrap()),
        ],
    );
    assert!(exec.ns >= preprocess.ns);
    assert_eq!(category(&t, "Execute Generated Commands"), 2);
}

#[test]
fn vulkan_1_4_commands_the_layer_does_not_trace_pass_through_untouched() {
    // The scenario binds its index buffer, descriptor set and push constants with
    // vkCmdBindIndexBuffer2KHR, vkCmdBindDescriptorSets2KHR and vkCmdPushConstants2KHR, and
    // checks the rendered quad's pixels: right only if each reached the driver as recorded.
    let t = traced("maintenance", false);
    let b = t.batch("maintenance");
    let draw = all(b, "start_draw_indexed", 1)[0];
    args(
        draw,
        &[("index_count", "6"), ("pipeline_name", "maintenance quad")],
    );
    let names: Vec<&str> = b.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "start_cmd_buffer",
            "start_rendering",
            "start_draw_indexed",
            "end_draw_indexed",
            "end_rendering",
            "start_copy_image_to_buffer",
            "end_copy_image_to_buffer",
            "end_cmd_buffer"
        ]
    );
}

/// Conditional rendering, on `icd`: two blocks, the second inverted, each around a dispatch.
fn conditional_rendering(icd: &str) {
    let t = traced_on(icd, "conditional_rendering", true);
    let b = t.batch("conditional");
    let blocks = all(b, "start_conditional_rendering", 2);
    args(blocks[0], &[("inverted", "false"), ("offset", "4")]);
    args(blocks[1], &[("inverted", "true"), ("offset", "4")]);
    for (block, pipeline) in blocks.iter().zip(["conditional A", "conditional B"]) {
        closes_later(b, block, "conditional_rendering");
        let inner: Vec<&Event> = b
            .events
            .iter()
            .filter(|e| e.name == "start_dispatch" && e.ns >= block.ns)
            .take(1)
            .collect();
        assert_eq!(
            inner[0].depth,
            block.depth + 1,
            "the dispatch inside the block"
        );
        args(inner[0], &[("pipeline_name", pipeline)]);
    }
}

#[test]
fn conditional_rendering_on_lavapipe_22() {
    conditional_rendering(LAVAPIPE_ICD);
}

#[test]
fn conditional_rendering_on_lavapipe_25() {
    let icd = utrace_tests::harness::lavapipe_25_icd();
    conditional_rendering(icd.to_str().expect("a UTF-8 path"));
}
