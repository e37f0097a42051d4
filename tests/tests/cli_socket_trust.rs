//! The command's side of the control socket, as root beside another user: `nobody`
//! (through `setpriv`) makes the sockets' folder in a runtime folder that is 0777 and not
//! sticky, and serves a fake socket there that answers with terminal escapes and a
//! capture "written to /etc/shadow". `utrace list`, `capture` and `top` refuse the folder,
//! saying whose it is, send it nothing, and print none of its words.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use utrace_tests::harness::utrace_exe;
use utrace_tests::two_users::{nobody, shared_folder};

/// The fake socket, run as `nobody` from a copy `nobody` can reach; its pid.
fn fake_as_nobody(dir: &Path, folder: &Path, lines: &[&str]) -> (Child, u32) {
    let exe = dir.join("fake-control");
    std::fs::copy(env!("CARGO_BIN_EXE_utrace-fake-control"), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = nobody(&[exe.to_str().unwrap(), folder.to_str().unwrap()])
        .args(lines)
        .stdout(Stdio::piped())
        .spawn()
        .expect("setpriv (util-linux) runs: this test plays root beside another user");
    let mut pid = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut pid)
        .unwrap();
    let pid = pid.trim().parse().unwrap_or_else(|_| {
        let _ = child.kill();
        panic!("the fake socket did not start as nobody: {pid:?}")
    });
    (child, pid)
}

fn utrace(runtime: &Path, args: &[&str]) -> Output {
    Command::new(utrace_exe())
        .args(args)
        .env("XDG_RUNTIME_DIR", runtime)
        .stdin(Stdio::null())
        .output()
        .expect("utrace runs")
}

#[test]
fn another_users_socket_in_a_shared_runtime_folder_is_refused_and_never_heard() {
    let (dir, runtime) = shared_folder("socket-trust");
    let folder = runtime.join("utrace");
    let lines = [
        r"\e[2J\e]0;owned\a",
        r"ok pid=1 name=\e[31mevil devices=1 capturing=0",
        "started",
        "done frames=5 batches=1 events=2 dropped=0 path=/etc/shadow",
    ];
    let (mut fake, pid) = fake_as_nobody(dir.path(), &folder, &lines);
    let pid = pid.to_string();
    let out_file = dir.path().join("out.txt");
    let runs = [
        utrace(&runtime, &["list"]),
        utrace(
            &runtime,
            &[
                "capture",
                "--pid",
                &pid,
                "--frames",
                "5",
                "--out",
                out_file.to_str().unwrap(),
            ],
        ),
        utrace(&runtime, &["top", "--pid", &pid, "--seconds", "1"]),
    ];
    let _ = fake.kill();
    let _ = fake.wait();
    for (what, out) in ["list", "capture", "top"].iter().zip(&runs) {
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(2), "{what}: {stdout}{stderr}");
        assert!(
            stderr.contains("refused") && stderr.contains("belongs to user 65534"),
            "{what} says whose folder it is: {stderr}"
        );
        assert!(
            !stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'),
            "{what} printed the peer's escapes"
        );
        assert!(
            !stdout.contains("captured") && !stderr.contains("shadow"),
            "{what}"
        );
    }
    assert!(!out_file.exists());
}
