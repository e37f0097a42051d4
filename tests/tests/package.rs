//! scripts/package.sh builds the Debian package (here from the debug build the tests
//! already have, UTRACE_PACKAGE_PROFILE=debug UTRACE_PACKAGE_BUILT=1): its control fields,
//! its files, and manifests that name the library where the package puts it; what lintian
//! says of it; and the package installed, used and removed in a throwaway root
//! (tests/scripts/package-in-throwaway-root.sh, in a mount namespace of its own).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use utrace_tests::harness::{read_report, target_dir, utrace_exe, TempDir};

fn dpkg_deb(args: &[&str]) -> String {
    let out = Command::new("dpkg-deb").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What `utrace --version` says of this build: `utrace 0.1.0 (commit ...)`.
fn built_version() -> String {
    let out = Command::new(utrace_exe())
        .arg("--version")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// The package, built once for this file's tests into `target/package-test`, with the
/// default maintainer (Debian's DEBFULLNAME and DEBEMAIL not passed on).
fn package() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = target_dir().join("package-test");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new("bash")
            .arg("scripts/package.sh")
            .arg(&dir)
            .current_dir(repository())
            .env("UTRACE_PACKAGE_PROFILE", "debug")
            .env("UTRACE_PACKAGE_BUILT", "1")
            .env_remove("DEBFULLNAME")
            .env_remove("DEBEMAIL")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let deb = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        assert!(
            deb.extension().is_some_and(|e| e == "deb") && deb.is_file(),
            "{}",
            deb.display()
        );
        deb
    })
}

#[test]
fn the_package_holds_the_layer_its_manifests_the_command_and_its_docs() {
    let dir = TempDir::new("package");
    let deb = package().to_str().unwrap();
    let fields = dpkg_deb(&["-f", deb, "Package", "Version", "Depends"]);
    assert!(fields.contains("Package: utrace"), "{fields}");
    assert!(
        fields.contains(&format!("Version: {}", env!("CARGO_PKG_VERSION"))),
        "{fields}"
    );
    assert!(fields.contains("libvulkan1"), "{fields}");
    let files = dpkg_deb(&["-c", deb]);
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
    dpkg_deb(&["-x", deb, root.to_str().unwrap()]);
    let version = built_version();
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

/// lintian, Debian's package checker, says only what docs/packaging.md explains: the
/// default maintainer's address (the project has none of its own yet) is not a real one.
#[test]
fn lintian_says_only_what_the_docs_explain() {
    let out = Command::new("lintian")
        .arg(package())
        .output()
        .expect("lintian is missing: bash scripts/setup.sh installs it");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut tags: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split(": ").nth(2))
        .map(|rest| rest.split_whitespace().next().unwrap_or(rest))
        .collect();
    tags.sort();
    tags.dedup();
    assert_eq!(
        tags,
        ["bogus-mail-host", "bogus-mail-host-in-debian-changelog"],
        "lintian said:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let documented = std::fs::read_to_string(repository().join("docs/packaging.md")).unwrap();
    for tag in tags {
        assert!(documented.contains(tag), "docs/packaging.md explains {tag}");
    }
}

/// One step's output from the throwaway root: (status, stdout, stderr).
fn step(out: &Path, name: &str) -> (String, String, String) {
    let read = |ext: &str| {
        std::fs::read_to_string(out.join(format!("{name}.{ext}")))
            .unwrap_or_else(|e| panic!("{name}.{ext}: {e}"))
    };
    (read("rc").trim().to_string(), read("out"), read("err"))
}

/// The package installed (dpkg -i), used as a user would with nothing pointing the loader
/// anywhere, and removed (dpkg -r), in a mount namespace whose /usr, /etc and /var are
/// overlays that vanish with it: the machine is left as it was.
#[test]
fn the_package_installs_works_from_the_system_folders_and_removes_cleanly() {
    let dir = TempDir::new("package-install");
    let script = repository().join("tests/scripts/package-in-throwaway-root.sh");
    // A generous bound: dpkg's man-db trigger and four Lavapipe runs take seconds.
    let run = Command::new("timeout")
        .args([
            "600",
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "bash",
        ])
        .arg(&script)
        .arg(package())
        .arg(env!("CARGO_BIN_EXE_utrace-workload"))
        .arg(dir.path())
        .env_remove("VK_ADD_LAYER_PATH")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = dir.path();
    let ok = |name: &str| {
        let (rc, stdout, stderr) = step(out, name);
        assert_eq!(rc, "0", "{name} failed:\n{stdout}\n{stderr}");
        (stdout, stderr)
    };
    let (_, _) = ok("install");
    let (files, _) = ok("files");
    for want in [
        "/usr/bin/utrace",
        "/usr/share/vulkan/explicit_layer.d/VkLayer_utrace.json",
        "/usr/share/man/man1/utrace.1.gz",
    ] {
        assert!(files.lines().any(|l| l == want), "{want} in\n{files}");
    }

    // Enabled by name, the loader finding the system's manifest by itself.
    let (trace, log) = ok("explicit");
    assert!(
        trace.contains("BATCH 1:") && trace.contains("start_cmd_buffer"),
        "{trace}"
    );
    assert!(
        log.contains("/usr/share/vulkan/explicit_layer.d/VkLayer_utrace.json"),
        "{log}"
    );
    let loaded = log
        .lines()
        .find(|l| l.contains("Loading layer library") && l.contains("libVkLayer_utrace.so"))
        .unwrap_or_else(|| panic!("the loader loads the layer:\n{log}"));
    assert!(
        loaded.contains("/usr/lib/") && loaded.contains("/utrace/libVkLayer_utrace.so"),
        "the installed library: {loaded}"
    );
    let version = built_version();
    let version = version.trim().trim_start_matches("utrace ");
    assert!(
        log.contains(&format!("VK_LAYER_utrace {version}")),
        "the layer says its version {version}:\n{log}"
    );
    let report = read_report(&out.join("explicit.json")).unwrap();
    assert!(
        report.validation_messages.is_empty(),
        "validation beneath the installed layer: {:?}",
        report.validation_messages
    );

    // GPU_TRACE=1 alone loads the implicit layer; UTRACE_DISABLE=1 keeps it out.
    let (trace, _) = ok("implicit");
    assert!(
        trace.contains("BATCH 1:"),
        "implicit layer traced:\n{trace}"
    );
    let (trace, _) = ok("disabled");
    assert!(!trace.contains("BATCH"), "UTRACE_DISABLE=1:\n{trace}");

    // /usr/bin/utrace run, with no layer beside it, uses the installed one.
    let (report, stderr) = ok("run");
    assert!(
        report.contains("range") && report.contains("cmd_buffer"),
        "{report}\n{stderr}"
    );
    let written = std::fs::read_to_string(out.join("run.txt")).unwrap();
    assert!(written.contains("BATCH 1:"), "{written}");

    // man finds the pages where the package put them.
    for (name, want) in [
        ("man", "utrace-layer(7)"),
        ("man-run", "utrace-run"),
        ("man-layer", "GPU_TRACE"),
    ] {
        let (page, _) = ok(name);
        assert!(
            page.contains("NAME") && page.contains(want),
            "{name}:\n{page}"
        );
    }
    // bash-completion loads the completions on demand.
    let (completion, _) = ok("completion");
    assert!(
        completion.contains("-F _utrace utrace") && completion.contains("report"),
        "{completion}"
    );

    // dpkg -r takes away everything it put there.
    ok("remove");
    let (_, status, _) = step(out, "status");
    assert!(!status.contains("ok installed"), "after dpkg -r: {status}");
    let before = std::fs::read_to_string(out.join("before.list")).unwrap();
    assert!(
        before.lines().count() > 1000,
        "the listing of /usr and /etc"
    );
    let left = std::fs::read_to_string(out.join("left-behind.out")).unwrap();
    assert!(
        left.is_empty(),
        "what dpkg -r left (or took) beyond what was there before:\n{left}"
    );
}
