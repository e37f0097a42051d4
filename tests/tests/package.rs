//! scripts/package.sh builds the Debian package (here from the debug build the tests
//! already have, UTRACE_PACKAGE_PROFILE=debug UTRACE_PACKAGE_BUILT=1): its control fields,
//! its files, and manifests that name the library where the package puts it.

use std::process::Command;

use utrace_tests::harness::{utrace_exe, TempDir};

fn dpkg_deb(args: &[&str]) -> String {
    let out = Command::new("dpkg-deb").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_package_holds_the_layer_its_manifests_the_command_and_its_docs() {
    let dir = TempDir::new("package");
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let out = Command::new("bash")
        .arg("scripts/package.sh")
        .arg(dir.path())
        .current_dir(repo)
        .env("UTRACE_PACKAGE_PROFILE", "debug")
        .env("UTRACE_PACKAGE_BUILT", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deb = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(
        deb.ends_with(".deb") && std::path::Path::new(&deb).is_file(),
        "{deb}"
    );
    let fields = dpkg_deb(&["-f", &deb, "Package", "Version", "Depends"]);
    assert!(fields.contains("Package: utrace"), "{fields}");
    assert!(
        fields.contains(&format!("Version: {}", env!("CARGO_PKG_VERSION"))),
        "{fields}"
    );
    assert!(fields.contains("libvulkan1"), "{fields}");
    let files = dpkg_deb(&["-c", &deb]);
    for want in [
        "./usr/bin/utrace",
        "/utrace/libVkLayer_utrace.so",
        "./usr/share/vulkan/explicit_layer.d/VkLayer_utrace.json",
        "./usr/share/vulkan/implicit_layer.d/VkLayer_utrace_implicit.json",
        "./usr/share/man/man1/utrace.1.gz",
        "./usr/share/man/man1/utrace-report.1.gz",
        "./usr/share/man/man7/utrace-layer.7.gz",
        "./usr/share/bash-completion/completions/utrace",
        "./usr/share/doc/utrace/copyright",
        "./usr/share/doc/utrace/changelog.gz",
    ] {
        assert!(files.contains(want), "{want} in\n{files}");
    }
    assert!(
        files.lines().all(|l| l.contains("root/root")),
        "root owned:\n{files}"
    );
    // The manifests name the library by the path the package installs it at, and say the
    // build's version and commit, as `utrace --version` does.
    let root = dir.path().join("root");
    dpkg_deb(&["-x", &deb, root.to_str().unwrap()]);
    let version = String::from_utf8(
        Command::new(utrace_exe())
            .arg("--version")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    for kind in [
        "explicit_layer.d/VkLayer_utrace.json",
        "implicit_layer.d/VkLayer_utrace_implicit.json",
    ] {
        let text = std::fs::read_to_string(root.join("usr/share/vulkan").join(kind)).unwrap();
        let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        let library = manifest["layer"]["library_path"].as_str().unwrap();
        assert!(
            library.starts_with("/usr/lib/") && library.ends_with("/utrace/libVkLayer_utrace.so"),
            "{library}"
        );
        assert!(
            root.join(library.trim_start_matches('/')).is_file(),
            "{library}"
        );
        let description = manifest["layer"]["description"].as_str().unwrap();
        assert!(
            description.starts_with(&format!("{}: ", version.trim())),
            "{description}"
        );
    }
    let implicit = std::fs::read_to_string(
        root.join("usr/share/vulkan/implicit_layer.d/VkLayer_utrace_implicit.json"),
    )
    .unwrap();
    assert!(
        implicit.contains("\"GPU_TRACE\": \"1\"") && implicit.contains("\"UTRACE_DISABLE\": \"1\""),
        "{implicit}"
    );
}
