//! Captures started from outside (issue 13): a presenting workload that loaded the layer
//! with no tracing variable, captured by `utrace capture` from another process through its
//! control socket; two captures in a row; garbage on the socket; a client of another user
//! refused; the process exiting during a capture; no socket with `UTRACE_DISABLE=1`.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use utrace_tests::checks::{assert_clean, parse};
use utrace_tests::control_socket::{pid_of, socket, text, utrace};
use utrace_tests::harness::{utrace_exe, Run, TempDir, Workload, XServer};
use utrace_tests::trace_txt::Item;
use utrace_tests::workload;

const LAYERS: &[&str] = &["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"];

/// The `frames` scenario presenting `frames` frames, `pace_ms` apart, with no tracing
/// variable: the layer is loaded and idle until a capture is asked.
fn presenting(x: &XServer, frames: u32, pace_ms: u32) -> Workload {
    workload!("frames")
        .layers(LAYERS)
        .arg("--frames", &frames.to_string())
        .arg("--pace-ms", &pace_ms.to_string())
        .env("DISPLAY", &x.display)
}

/// The frame ends of a txt capture (parsed strictly: a torn batch fails).
fn frames_ended(path: &Path) -> Vec<u32> {
    let trace = parse(&std::fs::read_to_string(path).unwrap());
    assert!(!trace.batches.is_empty(), "{}", path.display());
    assert_eq!(trace.ends.len(), 1, "the capture's END OF TRACE");
    trace
        .items
        .iter()
        .filter_map(|i| match i {
            Item::EndOfFrame(f) => Some(*f),
            _ => None,
        })
        .collect()
}

/// Sends raw bytes and returns the reply.
fn raw(socket: &Path, bytes: &[u8]) -> String {
    let mut s = UnixStream::connect(socket).unwrap();
    s.write_all(bytes).unwrap();
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    reply
}

#[test]
fn a_running_process_is_captured_from_outside() {
    let x = XServer::start();
    let dir = TempDir::new("capture");
    let run: Run = std::thread::scope(|scope| {
        let running = scope.spawn(|| presenting(&x, 400, 15).run(&dir));
        let socket = socket(&dir, Duration::from_secs(20)).expect("the workload's control socket");
        let pid = pid_of(&socket);
        let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the socket is the user's alone");

        let listed = utrace(&dir, &["list"]);
        assert!(
            text(&listed.stdout).contains(&format!("{pid}  utrace-workload")),
            "{}",
            text(&listed.stdout)
        );

        // Garbage first: an error line, nothing changed.
        assert!(raw(&socket, b"\x00\xffcapture frames=zz\n").starts_with("error "));
        assert!(raw(&socket, b"stop\n").starts_with("error no capture"));

        let out = utrace(
            &dir,
            &[
                "capture", "--pid", &pid, "--frames", "5", "--out", "five.txt",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).starts_with("captured 5 frames,"),
            "{}",
            text(&out.stdout)
        );
        let ended = frames_ended(&dir.path().join("five.txt"));
        assert_eq!(ended.len(), 5, "{ended:?}");
        assert!(
            ended.windows(2).all(|w| w[1] == w[0] + 1),
            "consecutive: {ended:?}"
        );

        // A second capture of the same process, another format.
        let out = utrace(
            &dir,
            &[
                "capture",
                "--pid",
                &pid,
                "--frames",
                "3",
                "--format",
                "json",
                "--out",
                "three.json",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let json = std::fs::read_to_string(dir.path().join("three.json")).unwrap();
        assert_eq!(
            json.lines()
                .filter(|l| l.contains("\"type\":\"end_of_frame\""))
                .count(),
            3
        );
        assert!(json
            .lines()
            .last()
            .unwrap()
            .contains("\"type\":\"end_of_trace\""));

        // A long capture ended early by --stop from a third process.
        let (dir_ref, pid_ref) = (&dir, pid.clone());
        let long = scope.spawn(move || {
            utrace(
                dir_ref,
                &[
                    "capture", "--pid", &pid_ref, "--frames", "100000", "--out", "long.txt",
                ],
            )
        });
        std::thread::sleep(Duration::from_millis(500));
        // On a loaded machine the long capture may not have begun yet: the stop then finds
        // no capture in progress, and is asked again.
        let deadline = Instant::now() + Duration::from_secs(10);
        let stop = loop {
            let stop = utrace(&dir, &["capture", "--pid", &pid, "--stop"]);
            let not_yet = text(&stop.stderr).contains("no capture in progress");
            if stop.status.success() || !not_yet || Instant::now() > deadline {
                break stop;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(stop.status.success(), "{}", text(&stop.stderr));
        let long = long.join().unwrap();
        assert!(long.status.success(), "{}", text(&long.stderr));
        assert!(
            text(&long.stdout).contains("(stopped early)"),
            "{}",
            text(&long.stdout)
        );
        assert!(!frames_ended(&dir.path().join("long.txt")).is_empty());
        running.join().unwrap()
    });
    assert_clean(&run);
    assert!(
        socket(&dir, Duration::ZERO).is_none(),
        "the socket is removed at exit"
    );
}

#[test]
fn a_capture_asked_by_another_user_is_refused() {
    let x = XServer::start();
    let dir = TempDir::new("capture-other-user");
    let run = std::thread::scope(|scope| {
        let running = scope.spawn(|| presenting(&x, 150, 15).run(&dir));
        let socket = socket(&dir, Duration::from_secs(20)).expect("the control socket");
        let pid = pid_of(&socket);
        // Opened up, so that the connection itself succeeds: the layer must refuse by the
        // peer's credentials alone.
        for p in [
            dir.path(),
            &dir.path().join("xdg"),
            socket.parent().unwrap(),
        ] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
        let out = Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(utrace_exe())
            .args([
                "capture",
                "--pid",
                &pid,
                "--frames",
                "2",
                "--out",
                "/tmp/never.txt",
            ])
            .env("XDG_RUNTIME_DIR", dir.path().join("xdg"))
            .current_dir("/")
            .output()
            .expect("setpriv (util-linux) runs");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("refused"), "{err}");
        assert!(!Path::new("/tmp/never.txt").exists());
        running.join().unwrap()
    });
    assert_clean(&run);
}

#[test]
fn a_process_that_exits_during_a_capture_leaves_a_whole_file() {
    let x = XServer::start();
    let dir = TempDir::new("capture-exit");
    let run = std::thread::scope(|scope| {
        let running = scope.spawn(|| presenting(&x, 40, 20).run(&dir));
        let socket = socket(&dir, Duration::from_secs(20)).expect("the control socket");
        let out = utrace(
            &dir,
            &[
                "capture",
                "--pid",
                &pid_of(&socket),
                "--frames",
                "1000",
                "--out",
                "cut.txt",
            ],
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("exited during the capture"), "{err}");
        running.join().unwrap()
    });
    assert_clean(&run);
    let ended = frames_ended(&dir.path().join("cut.txt"));
    assert!(
        !ended.is_empty() && ended.last() == Some(&39),
        "every frame up to the last: {ended:?}"
    );
}

#[test]
fn disabled_or_switched_off_leaves_no_socket() {
    let x = XServer::start();
    for (name, value) in [("UTRACE_DISABLE", "1"), ("VK_UTRACE_CONTROL", "false")] {
        let dir = TempDir::new("capture-none");
        let run = std::thread::scope(|scope| {
            let running = scope.spawn(|| presenting(&x, 60, 15).env(name, value).run(&dir));
            assert!(
                socket(&dir, Duration::from_millis(800)).is_none(),
                "{name}={value}"
            );
            let listed = utrace(&dir, &["list"]);
            assert!(text(&listed.stdout).contains("no process can be captured"));
            running.join().unwrap()
        });
        assert_clean(&run);
    }
}
