//! `utrace install` / `uninstall`: the layer copied into the user's loader folders, found
//! there by the loader (explicitly by `utrace run` from a binary with no layer beside it,
//! implicitly by `GPU_TRACE=1` alone), and removed again.

use std::path::{Path, PathBuf};
use std::process::Output;

use utrace_tests::harness::{lavapipe_command, utrace_exe, TempDir};

const WORKLOAD: &str = env!("CARGO_BIN_EXE_utrace-workload");

fn utrace() -> PathBuf {
    utrace_exe()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn utrace_in(dir: &TempDir, data: &Path, exe: &Path, args: &[&str]) -> Output {
    lavapipe_command(dir, exe)
        .env("XDG_DATA_HOME", data)
        .args(args)
        .output()
        .expect("utrace runs")
}

#[test]
fn installed_layers_are_found_by_the_loader_and_removed() {
    let dir = TempDir::new("cli-install");
    let data = dir.path().join("data");
    // A copy of the command with no layer beside it: it must find an installed one.
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let lone = bin.join("utrace");
    std::fs::copy(utrace(), &lone).unwrap();
    let run = |exe: &Path| {
        utrace_in(
            &dir,
            &data,
            exe,
            &[
                "run",
                "--out",
                "t.txt",
                "--",
                WORKLOAD,
                "--scenario",
                "basic",
                "--report",
                "r.json",
            ],
        )
    };
    let out = run(&lone);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cannot find VK_LAYER_utrace"),
        "{}",
        text(&out.stderr)
    );

    let out = utrace_in(&dir, &data, &utrace(), &["install"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let folder = data.join("vulkan/explicit_layer.d");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("VkLayer_utrace.json")).unwrap())
            .unwrap();
    let library = folder.join("libVkLayer_utrace.so");
    assert_eq!(manifest["layer"]["library_path"], library.to_str().unwrap());
    assert!(library.is_file());

    let out = run(&lone);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("cmd_buffer"),
        "{}",
        text(&out.stdout)
    );
    assert!(dir.path().join("t.txt").is_file());

    // Implicit: GPU_TRACE=1 alone loads it.
    let out = utrace_in(&dir, &data, &utrace(), &["install", "--implicit"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trace = dir.path().join("implicit.txt");
    let app = lavapipe_command(&dir, Path::new(WORKLOAD))
        .env("XDG_DATA_HOME", &data)
        .env("GPU_TRACE", "1")
        .env("GPU_TRACEFILE", &trace)
        .args(["--scenario", "basic", "--report", "r2.json"])
        .output()
        .unwrap();
    assert!(app.status.success(), "{}", text(&app.stderr));
    assert!(std::fs::read_to_string(&trace)
        .unwrap()
        .contains("BATCH 1:"));

    let out = utrace_in(&dir, &data, &utrace(), &["uninstall"]);
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout).matches("removed ").count(),
        4,
        "{}",
        text(&out.stdout)
    );
    assert!(!folder.join("VkLayer_utrace.json").exists() && !library.exists());
    assert!(!data
        .join("vulkan/implicit_layer.d/VkLayer_utrace.json")
        .exists());
    let out = utrace_in(&dir, &data, &utrace(), &["uninstall"]);
    assert!(text(&out.stdout).contains("nothing to remove"));
}
