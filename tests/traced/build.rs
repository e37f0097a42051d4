//! Compiles `src/mini_traced.cc` (the tests' tracing service: a few lines that start
//! Perfetto's service and its IPC host) against the declarations of the Perfetto SDK's
//! amalgamated source. The definitions come from the SDK archive that `perfetto-sdk-sys`
//! builds for the layer: this package depends on it, so cargo compiles the 12 MB
//! amalgamation once for both.
//!
//! The amalgamation ships inside the `perfetto-sdk-sys` package. Cargo tells a build
//! script nothing about another package's location (that crate declares no `links`), so
//! the source is found where cargo unpacks registry packages:
//! `$CARGO_HOME/registry/src/<registry>/perfetto-sdk-sys-<version>/`, the version being the
//! one the workspace's `Cargo.lock` pins. Cargo has unpacked it before any build script of
//! this package runs, because this package depends on it. (`cargo metadata` was used
//! before, and failed on a fresh crate cache: it wants every package of the lock file,
//! those of other platforms included.)

#[path = "src/amalgamation.rs"]
mod amalgamation;

use std::path::{Path, PathBuf};

const PACKAGE: &str = "perfetto-sdk-sys";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let lock = manifest_dir.join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    println!("cargo:rerun-if-changed=src/mini_traced.cc");
    println!("cargo:rerun-if-changed=src/amalgamation.rs");
    // The glue is compiled the way perfetto-sdk-sys compiles the SDK, as a precaution: its
    // classes are shared across the two objects. (In SDK 1.4.0 NDEBUG changes no layout,
    // since debug checks are off in non-standalone builds either way, but a later SDK may
    // differ.) Without NDEBUG when PERFETTO_SYS_LIB_DEBUG is "true", and with clang++
    // when one is installed and CXX is not set.
    println!("cargo:rerun-if-env-changed=PERFETTO_SYS_LIB_DEBUG");
    println!("cargo:rerun-if-env-changed=CXX");
    let sdk_debug = std::env::var("PERFETTO_SYS_LIB_DEBUG").as_deref() == Ok("true");

    let version = locked_version(&lock, PACKAGE);
    let package = unpacked_package(PACKAGE, &version);
    let source = package.join("libperfetto_c/perfetto_c.cc");
    let text = std::fs::read_to_string(&source)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()));
    let declarations = amalgamation::declarations(&text).unwrap_or_else(|e| {
        panic!(
            "cannot split {} into declarations and definitions: {e}",
            source.display()
        )
    });
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    let header = out.join("perfetto_declarations.h");
    std::fs::write(&header, declarations)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", header.display()));

    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .include(&out)
        // perfetto_c.h, which the declarations include first.
        .include(package.join("libperfetto_c"))
        .file("src/mini_traced.cc")
        .flag_if_supported("-Wno-redundant-move")
        .flag_if_supported("-Wno-unused-const-variable")
        .flag_if_supported("-Wno-unused-function");
    if !sdk_debug {
        build.define("NDEBUG", None);
    }
    if std::env::var_os("CXX").is_none()
        && std::process::Command::new("clang++")
            .arg("--version")
            .output()
            .is_ok()
    {
        build.compiler("clang++");
    }
    build.compile("mini_traced");
}

/// The version of `package` that `lock` pins (one version: the layer's and this package's
/// dependency on it are the same).
fn locked_version(lock: &Path, package: &str) -> String {
    let text = std::fs::read_to_string(lock)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", lock.display()));
    let name_line = format!("name = \"{package}\"");
    let mut versions = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == name_line {
            if let Some(version) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = \""))
                .and_then(|v| v.strip_suffix('"'))
            {
                versions.push(version.to_string());
            }
        }
    }
    match versions.as_slice() {
        [one] => one.clone(),
        [] => panic!("{} pins no version of {package}", lock.display()),
        many => panic!(
            "{} pins several versions of {package} ({}): the layer and the tests' tracing service must share one",
            lock.display(),
            many.join(", ")
        ),
    }
}

/// Where cargo unpacked `package` `version` from a registry: under
/// `$CARGO_HOME/registry/src/`, in the folder of whichever registry it came from.
fn unpacked_package(package: &str, version: &str) -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME is set");
    let registries = home.join("registry/src");
    let folder = format!("{package}-{version}");
    let found = std::fs::read_dir(&registries)
        .into_iter()
        .flatten()
        .flatten()
        .map(|registry| registry.path().join(&folder))
        .find(|candidate| candidate.join("libperfetto_c/perfetto_c.cc").is_file());
    found.unwrap_or_else(|| {
        panic!(
            "{folder} is not unpacked under {}: this package depends on {package}, so cargo \
             should have put it there (sources from `cargo vendor`, `[patch]` or git are not \
             supported)",
            registries.display()
        )
    })
}
