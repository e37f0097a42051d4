//! One version string: `utrace --version`, the layer's line (`UTRACE_LOG=info`) and its
//! `vkEnumerateInstanceLayerProperties` description name the package's version and the
//! commit the checkout is at.

use utrace_tests::harness::TempDir;
use utrace_tests::workload;

/// The checkout's commit as the build names it (12 hex digits), if git can say.
fn checkout_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn the_command_and_the_layer_name_the_same_version_and_commit() {
    let out = std::process::Command::new(utrace_tests::harness::utrace_exe())
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    let version = line.trim().strip_prefix("utrace ").expect("utrace VERSION");
    let want = match checkout_commit() {
        Some(commit) => format!("{} (commit {commit})", env!("CARGO_PKG_VERSION")),
        None => format!(
            "{} (commit unknown: built outside a git checkout)",
            env!("CARGO_PKG_VERSION")
        ),
    };
    assert_eq!(version, want);
    let dir = TempDir::new("version");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACE", "1")
        .env("UTRACE_LOG", "info")
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    let said = format!("utrace: info: VK_LAYER_utrace {version}\n");
    assert_eq!(run.stderr.matches(&said).count(), 1, "{}", run.stderr);
}
