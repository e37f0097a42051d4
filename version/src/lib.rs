//! The one version string of utrace, for build scripts: the package's version and the
//! commit it was built from, `0.1.0 (commit 1a2b3c4d5e6f)`. The commit comes from
//! `UTRACE_COMMIT` where set (a build from a source archive, which has no `.git`), else
//! from git in the checkout; without either the string says the commit is unknown. The
//! layer and the `utrace` command both read it as `env!("UTRACE_VERSION")`, so that a
//! trace, the layer's line and `utrace --version` name the same build.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Sets `UTRACE_VERSION` for the crate being built, and asks cargo to run the build
/// script again when the checkout's commit (or `UTRACE_COMMIT`) changes.
pub fn emit() {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let root = manifest.as_deref().and_then(checkout_root);
    println!("cargo:rerun-if-env-changed=UTRACE_COMMIT");
    if let Some(git) = root.as_ref().map(|r| r.join(".git")) {
        // Only files that exist: cargo runs the script at every build for a missing one.
        let branch = head_ref(&git);
        let watched = ["HEAD", "packed-refs"]
            .into_iter()
            .map(|f| git.join(f))
            .chain(branch.map(|b| git.join(b)));
        for path in watched.filter(|p| p.is_file()) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    let package = std::env::var("CARGO_PKG_VERSION").unwrap_or_else(|_| "0.0.0".into());
    let commit = std::env::var("UTRACE_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| root.as_deref().and_then(git_commit));
    println!(
        "cargo:rustc-env=UTRACE_VERSION={}",
        describe(&package, commit.as_deref())
    );
}

/// The version string of `package` built from `commit`.
pub fn describe(package: &str, commit: Option<&str>) -> String {
    match commit {
        Some(c) => format!("{package} (commit {})", c.trim()),
        None => format!("{package} (commit unknown: built outside a git checkout)"),
    }
}

/// The folder holding `.git` at or above `dir`.
fn checkout_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The branch `HEAD` names (`refs/heads/main`), if it names one.
fn head_ref(git: &Path) -> Option<String> {
    let head = std::fs::read_to_string(git.join("HEAD")).ok()?;
    head.strip_prefix("ref: ").map(|r| r.trim().to_string())
}

/// The checkout's commit, 12 hex digits (`None` where git is missing or fails).
fn git_commit(root: &Path) -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root)
        .output()
        .ok()?;
    let commit = String::from_utf8(out.stdout).ok()?;
    let commit = commit.trim();
    (out.status.success() && !commit.is_empty() && commit.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| commit.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_string_names_the_commit_or_says_it_is_unknown() {
        assert_eq!(
            super::describe("0.1.0", Some("1a2b3c4d5e6f\n")),
            "0.1.0 (commit 1a2b3c4d5e6f)"
        );
        assert_eq!(
            super::describe("0.1.0", None),
            "0.1.0 (commit unknown: built outside a git checkout)"
        );
    }
}
