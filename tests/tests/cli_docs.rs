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
    assert!(
        main.contains("SEE ALSO")
            && main.contains("utrace-layer(7)")
            && main.contains("utrace-run(1)"),
        "the pages it leads to: {main}"
    );
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

/// `utrace man DIR` writes its pages as every output of the command is written: run by
/// root into a folder another user can write, it refuses that user's link in place of a
/// page (and leaves what it points at alone), that user's FIFO, and a folder in its place.
#[test]
fn man_pages_refuse_another_users_link_fifo_and_folder() {
    use utrace_tests::two_users::{as_nobody_ok, shared_folder, untouched, victim};
    let (dir, shared) = shared_folder("cli-man-nobody");
    let target = victim(&dir);
    let man = || {
        Command::new(utrace_exe())
            .arg("man")
            .arg(&shared)
            .output()
            .unwrap()
    };
    let refused = |what: &str| {
        let out = man();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains("utrace.1"), "{what} names the page: {err}");
    };
    let page = shared.join("utrace.1");
    as_nobody_ok(&["ln", "-s", target.to_str().unwrap(), page.to_str().unwrap()]);
    refused("nobody's link");
    assert!(untouched(&target), "what the link points at");
    as_nobody_ok(&["rm", page.to_str().unwrap()]);
    as_nobody_ok(&["mkfifo", page.to_str().unwrap()]);
    refused("nobody's FIFO");
    as_nobody_ok(&["rm", page.to_str().unwrap()]);
    as_nobody_ok(&["mkdir", page.to_str().unwrap()]);
    refused("a folder");
    as_nobody_ok(&["rmdir", page.to_str().unwrap()]);
    // Nothing in the way: every page written, root's own.
    let out = man();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&page).unwrap().uid(), 0);
}

#[test]
fn man_pages_into_a_missing_folder_say_so() {
    let dir = TempDir::new("man-missing");
    let missing = dir.path().join("no/such/folder");
    let out = Command::new(utrace_exe())
        .arg("man")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no such folder") && err.contains("mkdir -p"),
        "{err}"
    );
    assert!(!missing.exists(), "nothing made");
}
