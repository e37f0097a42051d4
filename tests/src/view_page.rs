//! `utrace view`'s page in a real headless browser (Debian's chromium, installed by
//! scripts/setup.sh): loaded, scripted through the URL's fragment (`#click=slowest`, ...;
//! the page's main.js), and read back from the `data-*` attributes the page puts on its
//! <body> (`data-frame-bars`, `data-bars`, `data-errors`, ...).

use std::path::Path;
use std::process::{Command, Output};

use crate::harness::TempDir;

/// Headless chromium on `page` with `args`; its output. Root needs --no-sandbox.
pub fn chromium(dir: &TempDir, page: &Path, args: &[&str]) -> Output {
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
pub fn uncaught_errors(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("CONSOLE") && l.contains("Uncaught"))
        .collect()
}

/// The text of `name="..."` on the page's <body>.
pub fn body_text(dom: &str, name: &str) -> Option<String> {
    let body = &dom[dom.find("<body")?..];
    let body = &body[..body.find('>')?];
    let at = body.find(&format!("{name}=\""))? + name.len() + 2;
    Some(body[at..].split('"').next()?.to_string())
}

/// The number in `name="..."` on the page's <body>.
pub fn body_attribute(dom: &str, name: &str) -> Option<u64> {
    body_text(dom, name)?.parse().ok()
}

/// The page after the steps of `fragment`, its <body> attributes checked for script errors.
pub fn load(dir: &TempDir, page: &Path, fragment: &str) -> String {
    let url = Path::new(&format!("{}#{fragment}", page.display())).to_path_buf();
    let loaded = chromium(dir, &url, &["--window-size=1400,800", "--dump-dom"]);
    let dom = String::from_utf8_lossy(&loaded.stdout).to_string();
    let log = String::from_utf8_lossy(&loaded.stderr);
    assert_eq!(
        body_attribute(&dom, "data-errors"),
        Some(0),
        "{fragment}: {log}"
    );
    assert!(uncaught_errors(&log).is_empty(), "{fragment}: {log}");
    dom
}
