//! Compiles `src/mini_traced.cc`, which includes the Perfetto SDK's amalgamated source (the
//! service and its IPC host are in it), from the perfetto-sdk-sys package the workspace
//! already uses.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let workspace = manifest_dir.join("../../Cargo.toml");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--manifest-path",
        ])
        .arg(&workspace)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let sys = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == "perfetto-sdk-sys")
        .expect("the workspace depends on perfetto-sdk-sys");
    let source = PathBuf::from(sys["manifest_path"].as_str().expect("a path"))
        .parent()
        .expect("a package directory")
        .join("libperfetto_c");
    println!("cargo:rerun-if-changed=src/mini_traced.cc");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(&source)
        .file("src/mini_traced.cc")
        .define("NDEBUG", None)
        .flag_if_supported("-Wno-redundant-move")
        .flag_if_supported("-Wno-unused-const-variable")
        .flag_if_supported("-Wno-unused-function")
        .compile("mini_traced");
    println!("cargo:rustc-link-lib=pthread");
}
