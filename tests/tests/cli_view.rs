//! `utrace view`: the timeline page of a trace the layer wrote on Lavapipe, loaded in a
//! real headless browser (Debian's chromium, installed by scripts/setup.sh): no script
//! error, one bar drawn per range of the trace, a screenshot that is not blank, and no
//! request leaves the file (the page is self-contained); and a page of 100k ranges, every
//! one of them drawn or counted where a bar of its row already took its pixel.

use std::path::Path;
use std::process::{Command, Output};

use utrace_tests::checks::assert_clean;
use utrace_tests::harness::{utrace_exe, TempDir};
use utrace_tests::workload;

fn utrace(args: &[&str], paths: &[&Path]) -> Output {
    let mut cmd = Command::new(utrace_exe());
    cmd.args(args);
    for p in paths {
        cmd.arg(p);
    }
    cmd.output().expect("utrace runs")
}

/// Headless chromium on `page` with `args`; its output. Root needs --no-sandbox.
fn chromium(dir: &TempDir, page: &Path, args: &[&str]) -> Output {
    if let Err(e) = Command::new("chromium").arg("--version").output() {
        panic!(
            "this test needs Debian's chromium (`apt-get install chromium`; scripts/setup.sh \
             installs it): running `chromium --version` failed: {e}"
        );
    }
    Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args([
            "--virtual-time-budget=5000",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .env("HOME", dir.path())
        .output()
        .expect("chromium runs")
}

/// Chromium's log lines (`--enable-logging=stderr`) that report an uncaught script error.
fn uncaught_errors(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("CONSOLE") && l.contains("Uncaught"))
        .collect()
}

/// The value of `name="..."` on the page's <body>.
fn body_attribute(dom: &str, name: &str) -> Option<u64> {
    let body = &dom[dom.find("<body")?..];
    let body = &body[..body.find('>')?];
    let at = body.find(&format!("{name}=\""))? + name.len() + 2;
    body[at..].split('"').next()?.parse().ok()
}

#[test]
fn the_timeline_loads_in_a_browser_with_a_bar_per_range() {
    let dir = TempDir::new("cli-view");
    let trace = dir.path().join("trace.json");
    let run = workload!("demo")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", trace.to_str().unwrap())
        .env("GPU_TRACE_FORMAT", "json")
        .run(&dir);
    assert_clean(&run);
    let report = utrace(&["report", "--json"], &[&trace]);
    let v: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let ranges: u64 = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["count"].as_u64().unwrap())
        .sum();
    assert!(ranges > 0);

    let page = dir.path().join("timeline.html");
    let out = utrace(&["view", "-o"], &[&page, &trace]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "self-contained"
    );

    let loaded = chromium(&dir, &page, &["--dump-dom"]);
    let dom = String::from_utf8_lossy(&loaded.stdout);
    let log = String::from_utf8_lossy(&loaded.stderr);
    assert_eq!(body_attribute(&dom, "data-errors"), Some(0), "{log}");
    assert_eq!(body_attribute(&dom, "data-ranges"), Some(ranges), "{dom}");
    assert_eq!(
        body_attribute(&dom, "data-bars"),
        Some(ranges),
        "one bar per range"
    );
    assert!(uncaught_errors(&log).is_empty(), "{log}");

    let shot = dir.path().join("timeline.png");
    let shown = chromium(
        &dir,
        &page,
        &[
            "--window-size=1280,720",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let log = String::from_utf8_lossy(&shown.stderr);
    assert!(shot.is_file(), "{log}");
    assert!(uncaught_errors(&log).is_empty(), "{log}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let colours: std::collections::HashSet<&[u8]> =
        pixels[..info.buffer_size()].chunks(channels).collect();
    assert!(
        colours.len() > 20,
        "a drawn timeline, not a blank page: {} colours",
        colours.len()
    );
}

/// A txt trace of `batches` batches on one queue, each a command buffer around a label
/// around `draws` draws of 1 µs: `batches * (draws + 2)` ranges.
fn synthetic_trace(batches: u64, draws: u64) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut ns = 1_000_000u64;
    let line = |out: &mut String, ns: u64, text: &str| {
        let _ = writeln!(out, "{ns:016}        +0: {text}");
    };
    for b in 1..=batches {
        let _ = writeln!(
            out,
            "BATCH {b}: device=0 queue=0x10 frame={} submission={b} cmdbufs=1 queries=2",
            b / 2
        );
        line(&mut out, ns, "start_cmd_buffer: cmd=0x1, level=primary");
        line(&mut out, ns, "begin_label: label=\"pass\"");
        for _ in 0..draws {
            ns += 500;
            line(&mut out, ns, "start_draw: vertex_count=3, instance_count=1");
            ns += 1000;
            line(&mut out, ns, "end_draw");
        }
        line(&mut out, ns + 10, "end_label: label=\"pass\"");
        line(&mut out, ns + 20, "end_cmd_buffer: cmd=0x1");
        out.push_str("ELAPSED: 0 ns\n");
        ns += 50_000;
    }
    out
}

#[test]
fn a_hundred_thousand_ranges_are_all_drawn() {
    let dir = TempDir::new("cli-view-many");
    let trace = dir.path().join("many.txt");
    std::fs::write(&trace, synthetic_trace(100, 1000)).unwrap();
    let ranges = 100 * 1002;
    let page = dir.path().join("many.html");
    let out = utrace(&["view", "-o"], &[&page, &trace]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let loaded = chromium(&dir, &page, &["--dump-dom"]);
    let dom = String::from_utf8_lossy(&loaded.stdout);
    let log = String::from_utf8_lossy(&loaded.stderr);
    assert_eq!(body_attribute(&dom, "data-errors"), Some(0), "{log}");
    assert_eq!(body_attribute(&dom, "data-ranges"), Some(ranges));
    // Thousands of draws share each pixel of the full view: all are counted.
    assert_eq!(body_attribute(&dom, "data-bars"), Some(ranges));
    eprintln!(
        "first draw of {ranges} ranges: {:?} ms",
        body_attribute(&dom, "data-draw-ms")
    );
    assert!(uncaught_errors(&log).is_empty(), "{log}");
}
