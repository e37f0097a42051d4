//! Captures started from outside (issue 13): a presenting workload that loaded the layer
//! with no tracing variable, captured by `utrace capture` from another process through its
//! control socket; two captures in a row; garbage on the socket; a client of another user
//! refused; the process ending during a capture (its devices first, its exit first, killed);
//! no socket with `UTRACE_DISABLE=1`.

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

/// Waits until the capture's file holds a frame (the capture is under way).
fn wait_for_a_frame(file: &Path) {
    let has_frame = || std::fs::read_to_string(file).is_ok_and(|t| t.contains("END OF FRAME"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !has_frame() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(has_frame(), "the capture wrote no frame");
}

/// The `frames` scenario presenting until the test says `enough` (a file in `dir`).
fn presenting_until_enough(x: &XServer, dir: &TempDir) -> Workload {
    let enough = dir.path().join("enough");
    presenting(x, 100_000, 20).arg("--frames-until", enough.to_str().unwrap())
}

/// `utrace capture` of 1000 frames of `workload` (made by [`presenting_until_enough`]),
/// whose frames end once the capture has written one; then `go` is made (for a workload
/// that waits for it to exit). The client's output, the run, and the frames the file holds
/// (which must be whole, and every frame from the first captured to the last presented).
fn cut_short(workload: Workload, dir: &TempDir) -> (std::process::Output, Run, Vec<u32>) {
    let file = dir.path().join("cut.txt");
    let (out, run) = std::thread::scope(|scope| {
        let running = scope.spawn(|| workload.run(dir));
        let socket = socket(dir, Duration::from_secs(60)).expect("the control socket");
        let pid = pid_of(&socket);
        let client = scope.spawn(move || {
            utrace(
                dir,
                &[
                    "capture", "--pid", &pid, "--frames", "1000", "--out", "cut.txt",
                ],
            )
        });
        wait_for_a_frame(&file);
        std::fs::write(dir.path().join("enough"), b"").unwrap();
        let out = client.join().unwrap();
        // The process may have been kept alive until the client had its answer.
        std::fs::write(dir.path().join("go"), b"").unwrap();
        (out, running.join().unwrap())
    });
    let ended = frames_ended(&file);
    let presented = run.report().presents;
    assert!(
        ended.windows(2).all(|w| w[1] == w[0] + 1),
        "consecutive: {ended:?}"
    );
    assert_eq!(
        ended.last().map(|&f| u64::from(f) + 1),
        Some(u64::from(presented)),
        "every frame up to the last"
    );
    (out, run, ended)
}

#[test]
fn a_running_process_is_captured_from_outside() {
    let x = XServer::start();
    let dir = TempDir::new("capture");
    let run: Run = std::thread::scope(|scope| {
        let running = scope.spawn(|| presenting_until_enough(&x, &dir).run(&dir));
        let socket = socket(&dir, Duration::from_secs(60)).expect("the workload's control socket");
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
        std::fs::write(dir.path().join("enough"), b"").unwrap();
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
        let running = scope.spawn(|| presenting_until_enough(&x, &dir).run(&dir));
        let socket = socket(&dir, Duration::from_secs(60)).expect("the control socket");
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
        std::fs::write(dir.path().join("enough"), b"").unwrap();
        running.join().unwrap()
    });
    assert_clean(&run);
}

/// A capture the process cuts short says `ended` (exit 2) and how many frames its file
/// holds, whichever comes first, the devices' end or the process's exit.
fn assert_cut_short(out: &std::process::Output, ended: &[u32]) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("ended its devices or exited"), "{err}");
    assert!(
        err.contains(&format!("holds {} of the 1000 frames asked", ended.len())),
        "{err} ({} frames in the file)",
        ended.len()
    );
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
}

/// The application destroys its devices, then exits at once: the two race with the
/// capture's end, and the answer is the same either way.
#[test]
fn a_process_that_exits_during_a_capture_leaves_a_whole_file() {
    let x = XServer::start();
    let dir = TempDir::new("capture-exit");
    let (out, run, ended) = cut_short(presenting_until_enough(&x, &dir), &dir);
    assert_clean(&run);
    assert_cut_short(&out, &ended);
}

/// The devices' end first, forced: the process lives on until the client has its answer,
/// which therefore comes from the devices' end, not from the connection's.
#[test]
fn a_capture_cut_short_by_the_devices_end_says_so_while_the_process_lives() {
    let x = XServer::start();
    let dir = TempDir::new("capture-devices-gone");
    let go = dir.path().join("go");
    let workload = presenting_until_enough(&x, &dir).arg("--exit-when", go.to_str().unwrap());
    let (out, run, ended) = cut_short(workload, &dir);
    assert_clean(&run);
    assert_cut_short(&out, &ended);
}

/// The process's exit first, forced: it leaves with its devices alive, so the exit handler
/// closes their traces, which ends the capture, and waits for the client to be answered.
#[test]
fn a_capture_cut_short_by_the_exit_says_so_before_the_process_goes() {
    let x = XServer::start();
    let dir = TempDir::new("capture-exit-alive");
    let workload = presenting_until_enough(&x, &dir).arg("--exit-without-destroy", "");
    let (out, run, ended) = cut_short(workload, &dir);
    assert!(run.success, "{}", run.stderr);
    assert!(run.report().validation_messages.is_empty());
    assert_cut_short(&out, &ended);
}

/// A process killed during a capture cannot answer: the client says so, and counts what
/// the file holds itself.
#[test]
fn a_capture_of_a_killed_process_says_what_its_file_holds() {
    let x = XServer::start();
    let dir = &TempDir::new("capture-killed");
    let file = dir.path().join("cut.txt");
    let out = std::thread::scope(|scope| {
        let running = scope.spawn(|| presenting_until_enough(&x, dir).run(dir));
        let socket = socket(dir, Duration::from_secs(60)).expect("the control socket");
        let pid = pid_of(&socket);
        let workload_pid: i32 = pid.parse().unwrap();
        let client = scope.spawn(move || {
            utrace(
                dir,
                &[
                    "capture", "--pid", &pid, "--frames", "1000", "--out", "cut.txt",
                ],
            )
        });
        wait_for_a_frame(&file);
        // SAFETY: the workload's pid; it is a child of a thread of this process, not reaped
        // before the kill (its run waits for it).
        assert_eq!(unsafe { libc::kill(workload_pid, libc::SIGKILL) }, 0);
        let run = running.join().unwrap();
        assert_eq!(run.signal, Some(libc::SIGKILL));
        client.join().unwrap()
    });
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("exited during the capture, without a word"),
        "{err}"
    );
    // Whole batches only: the file reads, and the count is the file's.
    let trace = parse(&std::fs::read_to_string(&file).unwrap());
    let mut frames: Vec<u32> = trace.batches.iter().map(|b| b.frame).collect();
    frames.dedup();
    assert!(
        err.contains(&format!(
            "{} batches of {} frames",
            trace.batches.len(),
            frames.len()
        )),
        "{err}"
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
