//! `utrace man DIR` and `utrace completions SHELL`: the man pages render with `man`, one
//! per command and the layer's (its settings), and bash's completions load.

use std::process::Command;

use utrace_tests::harness::{utrace_exe, TempDir};

#[test]
fn the_man_pages_render_one_per_command() {
    let dir = TempDir::new("cli-man");
    let out = Command::new(utrace_exe())
        .arg("man")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut pages: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for want in [
        "utrace.1",
        "utrace-report.1",
        "utrace-run.1",
        "utrace-counters.1",
        "utrace-layer.7",
    ] {
        assert!(pages.iter().any(|p| p == want), "{want} in {pages:?}");
    }
    // `man -l` renders each page (MANWIDTH keeps the lines as wide as a terminal's).
    for page in &pages {
        let shown = Command::new("man")
            .arg("-l")
            .arg(dir.path().join(page))
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .output()
            .expect("man (package man-db) runs");
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(
            shown.status.success(),
            "{page}: {}",
            String::from_utf8_lossy(&shown.stderr)
        );
        assert!(
            text.contains("NAME") && text.contains("SYNOPSIS"),
            "{page}: {text}"
        );
    }
    let main = String::from_utf8(
        Command::new("man")
            .arg("-l")
            .arg(dir.path().join("utrace.1"))
            .env("MANPAGER", "cat")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        main.contains(env!("CARGO_PKG_VERSION")),
        "the version: {main}"
    );
    assert!(main.contains("report"), "the commands listed: {main}");
    // The layer's page lists its settings as its manifest does.
    let layer = String::from_utf8(
        Command::new("man")
            .arg("-l")
            .arg(dir.path().join("utrace-layer.7"))
            .env("MANPAGER", "cat")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    for setting in ["VK_UTRACE_TRACE_FILE", "VK_UTRACE_COUNTERS", "GPU_TRACE"] {
        assert!(layer.contains(setting), "{setting}: {layer}");
    }
}

#[test]
fn bash_completions_load_and_complete_the_commands() {
    let script = format!(
        "source <('{}' completions bash) && complete -p utrace && COMP_WORDS=(utrace rep); COMP_CWORD=1; _utrace utrace rep utrace; echo \"${{COMPREPLY[@]}}\"",
        utrace_exe().display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("-F _utrace utrace"), "{text}");
    assert!(
        text.lines()
            .last()
            .is_some_and(|l| l.split_whitespace().any(|w| w == "report")),
        "{text}"
    );
}
