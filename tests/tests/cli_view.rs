//! `utrace view`: the page of a trace, loaded in a real headless browser (Debian's
//! chromium, installed by scripts/setup.sh) and scripted through the URL's fragment as a
//! user would click (`#click=slowest`, `#hide=KIND`, `#search=TEXT`, `#zoom=in`; the page's
//! main.js): no script error, every range drawn or counted, one frame bar per frame, a
//! click on the slowest frame zooms to it and the statistics follow, a legend entry hides
//! its kind, the search finds labels and pipelines, every format shows its submits,
//! screenshots are not blank, no request leaves the file; and 100k and 1M ranges.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use utrace_tests::checks::assert_clean;
use utrace_tests::harness::{utrace_exe, TempDir, XServer};
use utrace_tests::view_page::{body_attribute, body_text, chromium, load, uncaught_errors};
use utrace_tests::workload;

fn utrace(args: &[&str], paths: &[&Path]) -> Output {
    let mut cmd = Command::new(utrace_exe());
    cmd.args(args);
    for p in paths {
        cmd.arg(p);
    }
    cmd.output().expect("utrace runs")
}

/// How many ranges of each kind the timeline drew (`data-drawn-by-kind`).
fn drawn_by_kind(dom: &str) -> Vec<(String, u64)> {
    let text = body_text(dom, "data-drawn-by-kind").expect("data-drawn-by-kind");
    text.split(',')
        .filter_map(|kv| kv.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.parse().expect("a count")))
        .collect()
}

/// A screenshot of the page (1400x800) at `shot`: the number of distinct colours in it.
fn screenshot(dir: &TempDir, page: &Path, fragment: &str, shot: &Path) -> usize {
    let url = Path::new(&format!("{}#{fragment}", page.display())).to_path_buf();
    let shown = chromium(
        dir,
        &url,
        &[
            "--window-size=1400,800",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let log = String::from_utf8_lossy(&shown.stderr);
    assert!(shot.is_file(), "{log}");
    assert!(uncaught_errors(&log).is_empty(), "{log}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let colours: std::collections::HashSet<&[u8]> =
        pixels[..info.buffer_size()].chunks(channels).collect();
    colours.len()
}

/// `utrace view TRACE -o PAGE`, which must succeed.
fn view(trace: &Path, page: &Path) {
    let out = utrace(&["view", "-o"], &[page, trace]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The sum of `report --json`'s counts: every range of the trace.
fn ranges_in(trace: &Path) -> u64 {
    let report = utrace(&["report", "--json"], &[trace]);
    let v: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    rows.iter().map(|r| r["count"].as_u64().unwrap()).sum()
}

/// `scenario` traced to `dir/name`, its format told by the name; with `frames`, that many
/// presented on the display given. The trace, and how many submissions the workload made.
fn traced(
    dir: &TempDir,
    scenario: &str,
    name: &str,
    frames: Option<(u32, &str)>,
) -> (PathBuf, u64) {
    let trace = dir.path().join(name);
    let mut w = workload!(scenario)
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", trace.to_str().unwrap());
    if let Some((count, display)) = frames {
        w = w
            .arg("--frames", &count.to_string())
            .env("DISPLAY", display);
    }
    let run = w.run(dir);
    assert_clean(&run);
    if let Some((count, _)) = frames {
        assert_eq!(run.report().presents, count);
    }
    let submissions = run
        .report()
        .devices
        .iter()
        .map(|d| d.submissions.len() as u64);
    (trace, submissions.sum())
}

#[test]
fn the_demo_page_loads_with_a_bar_per_range() {
    let dir = TempDir::new("cli-view");
    let (trace, submissions) = traced(&dir, "demo", "trace.json", None);
    let ranges = ranges_in(&trace);
    assert!(ranges > 0);
    let page = dir.path().join("timeline.html");
    view(&trace, &page);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "self-contained"
    );
    let dom = load(&dir, &page, "");
    assert_eq!(body_attribute(&dom, "data-ranges"), Some(ranges), "{dom}");
    assert_eq!(
        body_attribute(&dom, "data-bars"),
        Some(ranges),
        "one bar per range"
    );
    assert_eq!(body_attribute(&dom, "data-stats-count"), Some(ranges));
    // Without a window the demo's work stays in frame 0.
    assert_eq!(body_attribute(&dom, "data-frame-bars"), Some(1));
    assert_eq!(
        body_attribute(&dom, "data-submits-drawn"),
        Some(submissions)
    );
    // One queue's rows at their tallest fill less than the window: the timeline keeps what
    // it draws on and leaves the rest to the statistics, no blank band between.
    assert_eq!(
        body_attribute(&dom, "data-timeline-spare"),
        Some(0),
        "{dom}"
    );
    let colours = screenshot(&dir, &page, "", &dir.path().join("demo.png"));
    assert!(
        colours > 20,
        "a drawn page, not a blank one: {colours} colours"
    );
}

/// Every format carries each submission's CPU time (Perfetto as its `vk_queue_submit`,
/// the text formats as the batch's `submitted`): a marker per submission.
#[test]
fn every_format_shows_a_submit_marker_per_submission() {
    for name in ["trace.pftrace", "trace.txt", "trace.csv"] {
        let dir = TempDir::new("cli-view-submits");
        let (trace, submissions) = traced(&dir, "demo", name, None);
        assert!(submissions > 0);
        let page = dir.path().join("timeline.html");
        view(&trace, &page);
        let dom = load(&dir, &page, "");
        assert_eq!(
            body_attribute(&dom, "data-submits-drawn"),
            Some(submissions),
            "{name}: {dom}"
        );
        assert_eq!(body_attribute(&dom, "data-bars"), Some(ranges_in(&trace)));
        if name.ends_with(".pftrace") {
            let colours = screenshot(&dir, &page, "", &dir.path().join("perfetto.png"));
            assert!(colours > 20, "{colours} colours");
        }
    }
}

/// The first and last timestamp of frame `frame` in a json trace.
fn frame_extent(trace: &Path, frame: u64) -> (u64, u64) {
    let text = std::fs::read_to_string(trace).unwrap();
    let ns: Vec<u64> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a json line"))
        .filter(|b| b["type"] == "batch" && b["frame"].as_u64() == Some(frame))
        .flat_map(|b| b["events"].as_array().cloned().unwrap_or_default())
        .filter_map(|e| e["ns"].as_u64())
        .collect();
    (
        *ns.iter().min().expect("the frame's events"),
        *ns.iter().max().unwrap(),
    )
}

/// 100 frames on a window (as vkcube's): a bar per frame; a click on the slowest zooms the
/// timeline into it and the statistics count only what is there.
#[test]
fn a_hundred_frames_get_a_bar_each_and_the_slowest_is_zoomed_to() {
    let x = XServer::start();
    let dir = TempDir::new("cli-view-frames");
    let (trace, _) = traced(&dir, "frames", "trace.json", Some((100, &x.display)));
    let ranges = ranges_in(&trace);
    let page = dir.path().join("frames.html");
    view(&trace, &page);
    let dom = load(&dir, &page, "");
    assert_eq!(body_attribute(&dom, "data-frame-bars"), Some(100));
    assert_eq!(body_attribute(&dom, "data-stats-count"), Some(ranges));
    let whole = body_attribute(&dom, "data-view-t1").unwrap();

    let zoomed = load(&dir, &page, "click=slowest");
    let slowest = body_attribute(&zoomed, "data-slowest-frame").expect("a slowest frame");
    let (t0, t1) = (
        body_text(&zoomed, "data-view-t0").unwrap(),
        body_attribute(&zoomed, "data-view-t1").unwrap(),
    );
    // The view is that frame: its first to last timestamp, with the page's margin of 4% and
    // 100 ns each side (t0 and t1 are rounded to the ns).
    let (b, e) = frame_extent(&trace, slowest);
    let want = (e - b) as f64 * 1.08 + 200.0;
    let span = t1 as f64 - t0.parse::<f64>().unwrap();
    assert!(
        (span - want).abs() <= 2.0 && span < whole as f64,
        "frame {slowest} ({b}..{e}): the view spans {span} ns ({t0}..{t1}) of {whole}"
    );
    let counted = body_attribute(&zoomed, "data-stats-count").unwrap();
    assert!(
        counted > 0 && counted < ranges / 10,
        "{counted} of {ranges}"
    );
    for (fragment, name) in [
        ("", "frames.png"),
        ("click=slowest&select=longest", "slowest.png"),
    ] {
        let colours = screenshot(&dir, &page, fragment, &dir.path().join(name));
        assert!(colours > 20, "{name}: {colours} colours");
    }
}

/// A txt trace of `batches` batches (one per frame) on one queue, each a command buffer
/// around a label around `draws` draws of 1 µs (8 µs in batch `slow`), pipelines 0x1, 0x2,
/// 0x3 in turn: `batches * (draws + 2)` ranges.
fn synthetic_trace(batches: u64, draws: u64, slow: u64) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut ns = 1_000_000u64;
    let line = |out: &mut String, ns: u64, text: &str| {
        let _ = writeln!(out, "{ns:016}        +0: {text}");
    };
    for b in 1..=batches {
        let _ = writeln!(
            out,
            "BATCH {b}: device=0 queue=0x10 frame={b} submission={b} cmdbufs=1 queries=2"
        );
        line(&mut out, ns, "start_cmd_buffer: cmd=0x1, level=primary");
        line(&mut out, ns, "begin_label: label=\"pass\"");
        for d in 0..draws {
            ns += 500;
            let draw = format!("start_draw: vertex_count=3, pipeline={:#x}", d % 3 + 1);
            line(&mut out, ns, &draw);
            ns += if b == slow { 8000 } else { 1000 };
            line(&mut out, ns, "end_draw");
        }
        line(&mut out, ns + 10, "end_label: label=\"pass\"");
        line(&mut out, ns + 20, "end_cmd_buffer: cmd=0x1");
        out.push_str("ELAPSED: 0 ns\n");
        ns += 50_000;
    }
    out
}

/// The slowest frame is the one zoomed to, its ranges alone counted; the legend hides a
/// kind; the search finds labels by their text and draws by their pipeline.
#[test]
fn the_page_answers_clicks_on_frames_legend_and_search() {
    let dir = TempDir::new("cli-view-clicks");
    let trace = dir.path().join("slow.txt");
    std::fs::write(&trace, synthetic_trace(100, 20, 37)).unwrap();
    let page = dir.path().join("slow.html");
    view(&trace, &page);
    let dom = load(&dir, &page, "click=slowest");
    assert_eq!(body_attribute(&dom, "data-slowest-frame"), Some(37));
    assert_eq!(body_attribute(&dom, "data-initial-stats-count"), Some(2200));
    // Frame 37's command buffer, label and 20 draws; its neighbours are 50 µs away. The
    // table itself: 20 draws of 8 µs each (count, total, mean).
    assert_eq!(body_attribute(&dom, "data-stats-count"), Some(22), "{dom}");
    assert!(
        dom.contains("draw</td><td>20</td><td>160.0</td><td>8.0</td>"),
        "{dom}"
    );
    let want = [("cmd_buffer", 1), ("draw", 20), ("label", 1)];
    let want: Vec<(String, u64)> = want.iter().map(|(k, n)| (k.to_string(), *n)).collect();
    assert_eq!(drawn_by_kind(&dom), want);

    let whole = load(&dir, &page, "");
    assert!(whole.contains("draw</td><td>2000</td>"), "{whole}");

    let dom = load(&dir, &page, "hide=draw");
    let want = [("cmd_buffer", 100), ("draw", 0), ("label", 100)];
    let want: Vec<(String, u64)> = want.iter().map(|(k, n)| (k.to_string(), *n)).collect();
    assert_eq!(drawn_by_kind(&dom), want);
    assert_eq!(body_attribute(&dom, "data-bars"), Some(200));
    // Switched on again: all of them.
    let dom = load(&dir, &page, "hide=draw&hide=draw");
    assert_eq!(body_attribute(&dom, "data-bars"), Some(2200));

    let dom = load(&dir, &page, "search=PASS");
    assert_eq!(body_attribute(&dom, "data-search-matches"), Some(100));
    // Draws 1, 4, ..., 19 of each batch: 7 of 20.
    let dom = load(&dir, &page, "search=0x2");
    assert_eq!(body_attribute(&dom, "data-search-matches"), Some(700));
}

/// A txt trace with pipeline statistics: 10 batches, each a render pass of 5 draws (each
/// 1,000 fragments, the pass their sum) and a dispatch of 64 invocations, the command
/// buffer the sum of all.
fn counted_trace() -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut ns = 1_000_000u64;
    // An event `step` ns after the last.
    let mut line = |out: &mut String, step: u64, text: &str| {
        ns += step;
        let _ = writeln!(out, "{ns:016}        +0: {text}");
    };
    for b in 1..=10 {
        let _ = writeln!(
            out,
            "BATCH {b}: device=0 queue=0x10 frame={b} submission={b} cmdbufs=1 queries=2"
        );
        line(&mut out, 50_000, "start_cmd_buffer: cmd=0x1, level=primary");
        line(&mut out, 100, "start_render_pass: width=64, height=64");
        for _ in 0..5 {
            line(&mut out, 100, "start_draw: vertex_count=3");
            line(
                &mut out,
                1000,
                "end_draw: vertex_invocations=3, fragment_invocations=1000",
            );
        }
        line(
            &mut out,
            100,
            "end_render_pass: vertex_invocations=15, fragment_invocations=5000",
        );
        line(&mut out, 100, "start_dispatch: group_count_x=1");
        line(&mut out, 1000, "end_dispatch: compute_invocations=64");
        line(
            &mut out,
            100,
            "end_cmd_buffer: cmd=0x1, vertex_invocations=15, fragment_invocations=5000, compute_invocations=64",
        );
        out.push_str("ELAPSED: 0 ns\n");
    }
    out
}

/// A trace with GPU counters gets a counter track under its lane: fragment invocations by
/// default, a bar per draw (the innermost counted ranges: not the render pass around them
/// nor the command buffer); the header's list switches it to compute invocations, a bar
/// per dispatch. Hardware counters get the same track. A trace without counters has no
/// list and no track.
#[test]
fn a_trace_with_counters_draws_a_counter_track_under_its_lane() {
    let dir = TempDir::new("cli-view-counters");
    let trace = dir.path().join("counted.txt");
    std::fs::write(&trace, counted_trace()).unwrap();
    let page = dir.path().join("counted.html");
    view(&trace, &page);
    let dom = load(&dir, &page, "");
    assert_eq!(
        body_text(&dom, "data-counter").as_deref(),
        Some("fragment_invocations"),
        "{dom}"
    );
    assert_eq!(body_attribute(&dom, "data-counter-bars"), Some(50), "{dom}");
    assert_eq!(body_attribute(&dom, "data-errors"), Some(0), "{dom}");
    assert!(
        body_attribute(&dom, "data-timeline-spare").is_some(),
        "the lanes and their tracks laid out: {dom}"
    );
    let dom = load(&dir, &page, "counter=compute_invocations");
    assert_eq!(
        body_text(&dom, "data-counter").as_deref(),
        Some("compute_invocations"),
        "{dom}"
    );
    assert_eq!(body_attribute(&dom, "data-counter-bars"), Some(10), "{dom}");
    // Hardware counters (perf:Draws,GPU busy) on the render passes alone: a bar per pass,
    // the first counter by default.
    let hardware = counted_trace()
        .replace(
            "end_draw: vertex_invocations=3, fragment_invocations=1000",
            "end_draw",
        )
        .replace(
            "end_render_pass: vertex_invocations=15, fragment_invocations=5000",
            "end_render_pass: perf_draws=5, perf_gpu_busy=12.5",
        )
        .replace("end_dispatch: compute_invocations=64", "end_dispatch")
        .replace(
            "end_cmd_buffer: cmd=0x1, vertex_invocations=15, fragment_invocations=5000, compute_invocations=64",
            "end_cmd_buffer: cmd=0x1",
        );
    let perf = dir.path().join("perf.txt");
    std::fs::write(&perf, hardware).unwrap();
    let page = dir.path().join("perf.html");
    view(&perf, &page);
    let dom = load(&dir, &page, "");
    assert_eq!(
        body_text(&dom, "data-counter").as_deref(),
        Some("perf_draws"),
        "{dom}"
    );
    assert_eq!(body_attribute(&dom, "data-counter-bars"), Some(10), "{dom}");
    assert_eq!(body_attribute(&dom, "data-errors"), Some(0), "{dom}");
    let plain = dir.path().join("plain.txt");
    std::fs::write(&plain, synthetic_trace(3, 2, 1)).unwrap();
    let page = dir.path().join("plain.html");
    view(&plain, &page);
    let dom = load(&dir, &page, "");
    assert_eq!(
        body_text(&dom, "data-counter").as_deref(),
        Some(""),
        "{dom}"
    );
    assert_eq!(body_attribute(&dom, "data-counter-bars"), Some(0), "{dom}");
}

/// A page of `batches * (draws + 2)` ranges: every one drawn (or counted where its row
/// already filled its pixel) at first, then zoomed; the figures printed.
fn many_ranges(name: &str, batches: u64, draws: u64) {
    let dir = TempDir::new(name);
    let trace = dir.path().join("many.txt");
    std::fs::write(&trace, synthetic_trace(batches, draws, 37)).unwrap();
    let ranges = batches * (draws + 2);
    let page = dir.path().join("many.html");
    view(&trace, &page);
    let dom = load(&dir, &page, "");
    assert_eq!(body_attribute(&dom, "data-ranges"), Some(ranges));
    // Thousands of draws share each pixel of the full view: all are counted.
    assert_eq!(body_attribute(&dom, "data-bars"), Some(ranges));
    let zoomed = load(&dir, &page, "zoom=in&click=slowest&zoom=out");
    assert_eq!(body_attribute(&zoomed, "data-slowest-frame"), Some(37));
    let figure = |dom: &str, name| body_text(dom, name).unwrap_or_default();
    eprintln!(
        "{ranges} ranges: page {} bytes; first draw {} ms after navigation (drawing {} ms: \
         timeline {} ms, statistics {} ms); steps zoom in, click slowest, zoom out: {} ms",
        std::fs::metadata(&page).unwrap().len(),
        figure(&dom, "data-first-draw-at-ms"),
        figure(&dom, "data-draw-ms"),
        figure(&dom, "data-timeline-ms"),
        figure(&dom, "data-stats-ms"),
        figure(&zoomed, "data-step-ms"),
    );
}

#[test]
fn a_hundred_thousand_ranges_are_all_drawn() {
    many_ranges("cli-view-100k", 100, 1000);
}

#[test]
fn a_million_ranges_are_all_drawn() {
    many_ranges("cli-view-1m", 1000, 998);
}

/// busy% counts nested ranges of a kind once (issue 43, defect 13): three labels nested in
/// a command buffer cover all of its time, 100%, where their total is 240% of it.
#[test]
fn nested_labels_take_at_most_all_of_the_busy_time() {
    let dir = TempDir::new("cli-view-nested");
    let trace = dir.path().join("nested.txt");
    let line = |ns: u64, text: &str| format!("{:016}        +0: {text}\n", 1_000_000 + ns);
    let mut text =
        String::from("BATCH 1: device=0 queue=0x10 frame=0 submission=1 cmdbufs=1 queries=8\n");
    for (ns, event) in [
        (0, "start_cmd_buffer: cmd=0x1, level=primary"),
        (0, "begin_label: label=\"a\""),
        (10_000, "begin_label: label=\"b\""),
        (20_000, "begin_label: label=\"c\""),
        (80_000, "end_label: label=\"c\""),
        (90_000, "end_label: label=\"b\""),
        (100_000, "end_label: label=\"a\""),
        (100_000, "end_cmd_buffer: cmd=0x1"),
    ] {
        text.push_str(&line(ns, event));
    }
    text.push_str("ELAPSED: 0 ns\n");
    std::fs::write(&trace, text).unwrap();
    let page = dir.path().join("nested.html");
    view(&trace, &page);
    let dom = load(&dir, &page, "");
    let row = dom
        .split("label</td>")
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .unwrap_or_else(|| panic!("no label row: {dom}"));
    assert!(row.starts_with("<td>3</td><td>240.0</td>"), "{row}");
    assert!(row.ends_with("<td>100.0</td>"), "busy%: {row}");
}
