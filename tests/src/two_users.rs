//! Tests that play root beside a second local user, as an attacker would: `nobody`, through
//! `setpriv`, plants files in a folder both can write. That folder is 0777 and not sticky:
//! Debian's `fs.protected_symlinks` already guards sticky folders such as `/tmp`, where a
//! test could pass with the defect still there. Without root or `setpriv` these tests fail,
//! saying why; they never skip.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::harness::TempDir;

/// Fails unless the test runs as root.
pub fn assert_root() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "this test plays root beside another user: run it as root"
    );
}

/// `setpriv` running `args` as `nobody` (not yet started).
pub fn nobody(args: &[&str]) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .args(args)
        .stdin(Stdio::null());
    cmd
}

/// Runs `args` as `nobody`; its output.
pub fn as_nobody(args: &[&str]) -> Output {
    nobody(args)
        .output()
        .expect("setpriv (util-linux) runs: these tests play root beside another user")
}

/// Runs `args` as `nobody`, which must succeed.
pub fn as_nobody_ok(args: &[&str]) {
    let out = as_nobody(args);
    assert!(
        out.status.success(),
        "as nobody {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// After [`assert_root`]: a test folder any user may enter (0755), and `shared` in it,
/// 0777 and not sticky.
pub fn shared_folder(name: &str) -> (TempDir, PathBuf) {
    assert_root();
    let dir = TempDir::new(name);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    (dir, shared)
}

/// A file of root's only (0600) in `dir`, for links to point at: what must stay untouched.
pub fn victim(dir: &TempDir) -> PathBuf {
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "root's secret").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    victim
}

/// Whether `victim` ([`victim`]) holds what it held.
pub fn untouched(victim: &std::path::Path) -> bool {
    std::fs::read_to_string(victim).is_ok_and(|t| t == "root's secret")
}
