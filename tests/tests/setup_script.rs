//! scripts/setup.sh sets up only what it is asked for: the demo's packages alone for the
//! demo (`setup_for=demo`, as demo.sh sources it), everything for the tests. Run with fake
//! `dpkg-query` (nothing installed), `apt-get` and `rustup` first on the PATH, which log
//! what they were asked.

use std::path::Path;
use std::process::Command;

use utrace_tests::harness::TempDir;

const DEMO: [&str; 4] = ["mesa-vulkan-drivers", "libvulkan1", "xvfb", "xauth"];
const TESTS_ONLY: [&str; 9] = [
    "vulkan-validationlayers",
    "vulkan-tools",
    "glmark2-x11",
    "chromium",
    "tmux",
    "man-db",
    "bash-completion",
    "lintian",
    "gfxreconstruct",
];

/// What setup.sh asked of the fake tools with `setup_for` set to `mode`.
fn asked(mode: &str) -> String {
    let dir = TempDir::new(&format!("setup-{mode}"));
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.path().join("log");
    for tool in ["dpkg-query", "apt-get", "rustup"] {
        let script = format!(
            "#!/bin/sh\necho \"{tool} $*\" >> '{}'\n[ \"{tool}\" = dpkg-query ] && exit 1\nexit 0\n",
            log.display()
        );
        let path = bin.join(tool);
        std::fs::write(&path, script).unwrap();
        Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    }
    // Lavapipe 25.0 already provided, so that the tests' set-up downloads nothing.
    let target = dir.path().join("target");
    std::fs::create_dir_all(target.join("mesa-25.0")).unwrap();
    std::fs::write(target.join("mesa-25.0/lvp_icd.json"), "{}").unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let status = Command::new("bash")
        .arg("-c")
        .arg(format!("setup_for={mode} source scripts/setup.sh"))
        .current_dir(repo)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap();
    assert!(status.success(), "setup.sh failed for {mode}");
    std::fs::read_to_string(&log).unwrap_or_default()
}

/// The packages an `apt-get install` line of `log` asked for.
fn installed(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.starts_with("apt-get install"))
        .flat_map(|l| l.split_whitespace().skip(2))
        .filter(|w| !w.starts_with('-'))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_demo_installs_only_what_it_runs_and_the_tests_everything() {
    let demo = asked("demo");
    assert_eq!(installed(&demo), DEMO, "{demo}");
    assert!(!demo.contains("rustup component add"), "{demo}");
    let tests = asked("tests");
    let all: Vec<&str> = DEMO.iter().chain(&TESTS_ONLY).copied().collect();
    assert_eq!(installed(&tests), all, "{tests}");
    assert!(tests.contains("rustup component list"), "{tests}");
}
