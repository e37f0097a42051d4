//! The commands the README shows work, and print what it shows: every ```sh block is run
//! (but the lines listed in [`NOT_RUN`], each with the test that covers it instead), in
//! order, in one folder, as a user with utrace installed would run them: `utrace` on the
//! PATH, the layer where the loader finds it, Lavapipe, an X server, a home of their own.
//! The output shown after a block (```text) is checked for its shape, not its numbers
//! (`readme_blocks::shape`).

use std::path::Path;

use utrace_tests::harness::{
    lavapipe_command, target_dir, utrace_exe, write_manifest, TempDir, XServer,
};
use utrace_tests::readme_blocks::{first_missing, shell_blocks};

/// README lines not run here, and why.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "bash scripts/demo.sh",
        "builds the release profile (minutes more of CI); run by hand at each commit",
    ),
    ("bash scripts/test.sh", "the suite itself"),
    (
        "bash scripts/package.sh",
        "builds the release profile; tests/tests/package.rs builds the package from the debug one",
    ),
    (
        "apt install ./target/debian/utrace_*.deb",
        "changes the machine; tests/tests/package.rs installs it in a throwaway root",
    ),
    (
        "cargo build --release -p utrace-layer -p utrace-cli",
        "the suite runs on the same crates' debug build, which stands in for target/release here",
    ),
];

/// A shell line without its comment.
fn command(line: &str) -> &str {
    line.split(" #").next().unwrap_or(line).trim()
}

#[test]
fn every_shell_block_of_the_readme_runs_and_prints_what_it_shows() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    for (line, why) in NOT_RUN {
        assert!(
            readme.lines().any(|l| command(l) == *line),
            "NOT_RUN lists `{line}` ({why}), which the README no longer shows"
        );
    }
    let dir = TempDir::new("readme");
    let bin = dir.path().join("bin");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(utrace_exe(), bin.join("utrace")).unwrap();
    let layers = write_manifest(dir.path());
    let x = XServer::start();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let release = format!("{}/debug/", target_dir().display());

    let blocks = shell_blocks(&readme);
    let mut ran = 0;
    for block in &blocks {
        let script: Vec<String> = block
            .commands
            .iter()
            .filter(|l| !command(l).is_empty() && !NOT_RUN.iter().any(|(n, _)| command(l) == *n))
            .map(|l| l.replace("target/release/", &release))
            .collect();
        if script.is_empty() {
            continue;
        }
        ran += 1;
        let mut cmd = lavapipe_command(&dir, Path::new("timeout"));
        cmd.args(["300", "bash", "-e", "-c"])
            .arg(format!("exec 2>&1\n{}", script.join("\n")))
            .env("PATH", &path)
            .env("HOME", &home)
            .env("VK_ADD_LAYER_PATH", &layers)
            .env("DISPLAY", &x.display);
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "README line {}: {} failed ({}):\n{text}",
            block.line,
            script.join("; "),
            out.status
        );
        if let Some(missing) = first_missing(&block.shown, &text) {
            panic!(
                "README line {}: {} printed nothing shaped like\n  {missing}\nof what the README shows; it printed:\n{text}",
                block.line,
                script.join("; ")
            );
        }
    }
    assert!(ran >= 5, "{ran} blocks run of {}", blocks.len());
}
