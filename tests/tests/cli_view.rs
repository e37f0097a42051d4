//! `utrace view`: the timeline page of a trace the layer wrote on Lavapipe, loaded in a
//! real headless browser (Debian's chromium, installed by scripts/setup.sh): no script
//! error, one bar drawn per range of the trace, a screenshot that is not blank, and no
//! request leaves the file (the page is self-contained).

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
        .expect("chromium runs (scripts/setup.sh installs the chromium package)")
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
    assert!(!log.contains("Uncaught"), "{log}");

    let shot = dir.path().join("timeline.png");
    let shown = chromium(
        &dir,
        &page,
        &[
            "--window-size=1280,400",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(shot.is_file(), "{}", String::from_utf8_lossy(&shown.stderr));
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
