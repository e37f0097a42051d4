//! Names another user can predict (issue 43, defects 3 and 4), planted by `nobody`
//! (through `setpriv`) in a shared folder that is 0777 and not sticky, while root's process
//! waits to start (a shell prints its pid, which the program keeps, and execs it once told):
//!
//! - `utrace run` made its manifests' folder `$TMPDIR/utrace-run-<pid>` and took it as
//!   found: a planted folder with a link where the manifest goes had root overwrite the
//!   link's target, and the loader read the other user's manifests;
//! - a second process writing a held `GPU_TRACEFILE` wrote `NAME.<pid>.EXT` through a link
//!   planted there, truncating its target.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Output, Stdio};

use utrace_tests::harness::{lavapipe_command, utrace_exe, write_manifest, LAVAPIPE_ICD};
use utrace_tests::two_users::{as_nobody_ok, shared_folder, untouched, victim};

const WORKLOAD: &str = env!("CARGO_BIN_EXE_utrace-workload");

/// `cmd` started through a shell that says its pid and execs the program once a line
/// comes: the pid the program will have, and the line to send.
fn waiting(cmd: Command) -> (Child, u32, ChildStdin) {
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
    let mut shell = Command::new("/bin/sh");
    shell
        .arg("-c")
        .arg("echo $$; read go; exec \"$0\" \"$@\"")
        .arg(program)
        .args(args)
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = cmd.get_current_dir() {
        shell.current_dir(dir);
    }
    let mut child = shell.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pid = line.trim().parse().unwrap();
    let go = child.stdin.take().unwrap();
    (child, pid, go)
}

fn go(child: Child, mut go: ChildStdin) -> Output {
    writeln!(go, "go").unwrap();
    drop(go);
    child.wait_with_output().unwrap()
}

#[test]
fn utrace_runs_manifests_folder_is_never_one_another_user_made() {
    let (dir, shared) = shared_folder("planted-run-folder");
    let victim = victim(&dir);
    let mut cmd = lavapipe_command(&dir, &utrace_exe());
    cmd.env("TMPDIR", &shared)
        .args(["run", "--out"])
        .arg(dir.path().join("t.txt"))
        .args(["--", WORKLOAD, "--scenario", "basic"]);
    let (child, pid, line) = waiting(cmd);
    // The folder the command used to take, open to all, the manifest's name a link.
    let planted = shared.join(format!("utrace-run-{pid}"));
    let p = planted.to_str().unwrap();
    as_nobody_ok(&["mkdir", "-m", "0777", p]);
    let link = planted.join("VkLayer_utrace.json");
    as_nobody_ok(&["ln", "-s", victim.to_str().unwrap(), link.to_str().unwrap()]);
    let out = go(child, line);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(untouched(&victim));
    assert!(
        std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()),
        "nobody's folder is left as it was"
    );
    assert!(dir.path().join("t.txt").is_file(), "traced all the same");
}

#[test]
fn a_held_trace_files_pid_named_sibling_never_follows_a_planted_link() {
    let (dir, shared) = shared_folder("planted-sibling");
    let victim = victim(&dir);
    // The path is held, as another process writing it would hold it.
    let held = shared.join("gl.txt");
    let file = std::fs::File::create(&held).unwrap();
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor of a file this test keeps open.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(locked, 0);
    let manifests = write_manifest(dir.path());
    let mut cmd = Command::new(WORKLOAD);
    cmd.args(["--scenario", "basic"])
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("VK_DRIVER_FILES", LAVAPIPE_ICD)
        .env("VK_ADD_LAYER_PATH", &manifests)
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_utrace")
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("GPU_TRACEFILE", &held);
    let (child, pid, line) = waiting(cmd);
    let sibling: &Path = &shared.join(format!("gl.{pid}.txt"));
    as_nobody_ok(&[
        "ln",
        "-s",
        victim.to_str().unwrap(),
        sibling.to_str().unwrap(),
    ]);
    let out = go(child, line);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(untouched(&victim));
    assert!(
        stderr.contains("cannot be opened") && stderr.contains("stdout"),
        "said, and the trace went to stdout: {stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("BATCH "));
    drop(file);
}
