//! The control socket's folder (issue 26): `$XDG_RUNTIME_DIR/utrace` put there by someone
//! else (a symbolic link to another folder, a folder open to others, a folder of another
//! user) is refused with one message and left untouched, and the application is traced as
//! usual; a fresh folder is made 0700; and many idle connections get a busy reply instead
//! of a thread each, while a real capture still gets through afterwards.

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use utrace_tests::checks::{assert_clean, assert_trace_matches, parse};
use utrace_tests::control_socket::{pid_of, socket, text, utrace};
use utrace_tests::harness::{Run, TempDir, XServer};
use utrace_tests::workload;

/// The layer's bound on connections served at once (control/server.rs).
const MAX_CONNECTIONS: usize = 4;

/// `dir/xdg`, the runtime folder the harness gives the workload, made beforehand.
fn runtime(dir: &TempDir) -> PathBuf {
    let runtime = dir.path().join("xdg");
    std::fs::create_dir_all(&runtime).unwrap();
    runtime
}

/// `basic` traced to a file: the run and its trace, checked whole against the report.
fn traced_basic(dir: &TempDir) -> Run {
    let file = dir.path().join("trace.txt");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&std::fs::read_to_string(&file).unwrap(), &run);
    assert_eq!(trace.batches.len(), 4, "the trace is whole");
    run
}

/// The run said, once, that there is no socket because `folder` `why`.
fn assert_refused(run: &Run, folder: &Path, why: &str) {
    let said = format!("no control socket ({} {why}", folder.display());
    assert_eq!(
        run.stderr.matches(&said).count(),
        1,
        "{said:?} once in:\n{}",
        run.stderr
    );
}

/// The names in `folder`, sorted.
fn entries(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

#[test]
fn a_symbolic_link_is_refused_and_its_target_left_alone() {
    let dir = TempDir::new("control-link");
    let victim = dir.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "mine").unwrap();
    std::fs::set_permissions(&victim, PermissionsExt::from_mode(0o755)).unwrap();
    let link = runtime(&dir).join("utrace");
    std::os::unix::fs::symlink(&victim, &link).unwrap();

    let run = traced_basic(&dir);
    assert_refused(&run, &link, "is a symbolic link");
    assert_eq!(mode(&victim), 0o755, "the target's mode is unchanged");
    assert_eq!(entries(&victim), ["keep.txt"], "no socket in the target");
    assert_eq!(std::fs::read_link(&link).unwrap(), victim);
}

#[test]
fn a_folder_open_to_others_is_refused_and_left_alone() {
    let dir = TempDir::new("control-open");
    let folder = runtime(&dir).join("utrace");
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, PermissionsExt::from_mode(0o755)).unwrap();

    let run = traced_basic(&dir);
    assert_refused(
        &run,
        &folder,
        "has mode 0755: group or other users could reach it",
    );
    assert_eq!(mode(&folder), 0o755, "not chmod-ed");
    assert!(entries(&folder).is_empty(), "no socket");
}

#[test]
fn a_folder_of_another_user_is_refused_and_left_alone() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: giving a folder to user 65534 (nobody) needs root");
        return;
    }
    let dir = TempDir::new("control-other");
    let folder = runtime(&dir).join("utrace");
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, PermissionsExt::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&folder, Some(65534), Some(65534)).unwrap();

    let run = traced_basic(&dir);
    assert_refused(&run, &folder, "belongs to user 65534");
    let meta = std::fs::metadata(&folder).unwrap();
    assert_eq!((meta.uid(), mode(&folder)), (65534, 0o700), "untouched");
    assert!(entries(&folder).is_empty(), "no socket");
}

/// The threads of `pid` named `utrace-control` (the listener and one per connection).
fn control_threads(pid: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.trim() == "utrace-control")
                })
                .count()
        })
        .unwrap_or(0)
}

/// The first line each connection has received so far (read without waiting).
fn replies(streams: &mut [UnixStream], got: &mut [Vec<u8>]) {
    for (s, line) in streams.iter_mut().zip(got.iter_mut()) {
        let mut buf = [0u8; 256];
        while !line.contains(&b'\n') {
            match s.read(&mut buf) {
                Ok(n) if n > 0 => line.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
    }
}

/// Asks `status` until it is served (the idle connections' places are given back).
fn status_served(socket: &Path, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let mut s = UnixStream::connect(socket).unwrap();
        // A busy layer answers without reading and closes: the request may then not be
        // written whole (a broken pipe), and the reply still says why.
        let _ = s.write_all(b"status\n");
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
        if !reply.contains("busy") || Instant::now() >= deadline {
            return reply;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_fresh_folder_is_private_and_idle_connections_are_bounded() {
    let x = XServer::start();
    let dir = TempDir::new("control-bound");
    let run = std::thread::scope(|scope| {
        let running = scope.spawn(|| {
            workload!("frames")
                .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
                .arg("--frames", "1000000")
                .arg(
                    "--frames-until",
                    dir.path().join("enough").to_str().unwrap(),
                )
                .arg("--pace-ms", "15")
                .env("DISPLAY", &x.display)
                .run(&dir)
        });
        let socket = socket(&dir, Duration::from_secs(60)).expect("the control socket");
        let pid = pid_of(&socket);
        assert_eq!(mode(socket.parent().unwrap()), 0o700, "the folder made");
        assert_eq!(mode(&socket), 0o600, "the socket");

        // Connections that never send a thing: only MAX_CONNECTIONS are given a thread.
        let mut idle: Vec<UnixStream> = (0..50)
            .map(|_| UnixStream::connect(&socket).unwrap())
            .collect();
        for s in &idle {
            s.set_nonblocking(true).unwrap();
        }
        let mut got = vec![Vec::new(); idle.len()];
        fn busy<L: AsRef<[u8]>>(got: &[L]) -> usize {
            got.iter()
                .filter(|l| l.as_ref().starts_with(b"error the layer is busy"))
                .count()
        }
        // The most control threads seen while the replies come in.
        let mut threads = 0;
        let deadline = Instant::now() + Duration::from_secs(20);
        while busy(&got) < idle.len() - MAX_CONNECTIONS && Instant::now() < deadline {
            threads = threads.max(control_threads(&pid));
            replies(&mut idle, &mut got);
            std::thread::sleep(Duration::from_millis(10));
        }
        threads = threads.max(control_threads(&pid));
        let got: Vec<String> = got.iter().map(|l| text(l)).collect();
        println!("utrace-control threads with 50 idle connections: at most {threads}");
        assert!(
            threads <= 1 + MAX_CONNECTIONS,
            "{threads} control threads: the listener and at most {MAX_CONNECTIONS} connections"
        );
        assert_eq!(busy(&got), idle.len() - MAX_CONNECTIONS, "{got:#?}");
        assert!(
            got.iter().all(|l| l.is_empty() || l.ends_with('\n')),
            "one line each: {got:#?}"
        );
        idle.clear();

        // Once they are gone, status and a capture are served again.
        let status = status_served(&socket, Duration::from_secs(20));
        assert!(status.starts_with(&format!("ok pid={pid} ")), "{status}");
        let out = utrace(
            &dir,
            &[
                "capture",
                "--pid",
                &pid,
                "--frames",
                "3",
                "--out",
                "three.txt",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).starts_with("captured 3 frames,"),
            "{}",
            text(&out.stdout)
        );
        let trace = parse(&std::fs::read_to_string(dir.path().join("three.txt")).unwrap());
        assert!(!trace.batches.is_empty());
        // The workload presents until now, however long the steps above took.
        std::fs::write(dir.path().join("enough"), b"").unwrap();
        running.join().unwrap()
    });
    assert_clean(&run);
}

/// A peer that sends its request a byte at a time, never ending the line, is cut off once
/// the request's time is up (5 s from the connection), not kept as long as it trickles.
#[test]
fn a_request_trickled_a_byte_at_a_time_is_cut_off_in_time() {
    let x = XServer::start();
    let dir = TempDir::new("control-trickle");
    std::thread::scope(|scope| {
        let running = scope.spawn(|| {
            workload!("frames")
                .layers(&["VK_LAYER_utrace"])
                .arg("--frames", "1000000")
                .arg(
                    "--frames-until",
                    dir.path().join("enough").to_str().unwrap(),
                )
                .arg("--pace-ms", "15")
                .env("DISPLAY", &x.display)
                .run(&dir)
        });
        let socket = socket(&dir, Duration::from_secs(60)).expect("the control socket");
        let mut s = UnixStream::connect(&socket).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let started = Instant::now();
        let mut reply = Vec::new();
        while started.elapsed() < Duration::from_secs(15) {
            if s.write_all(b"s").is_err() {
                break;
            }
            let mut buf = [0u8; 256];
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => reply.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => break,
            }
            if reply.contains(&b'\n') {
                break;
            }
        }
        let took = started.elapsed();
        let reply = String::from_utf8_lossy(&reply).into_owned();
        // The layer's own 5 s limit for a whole request line, and 3 s for the reply to
        // come back on a busy machine: the limit is the layer's clock, not the machine's.
        assert!(
            took < Duration::from_secs(8),
            "cut off after {took:?}, not held while it trickles: {reply:?}"
        );
        assert!(
            reply.starts_with("error no whole request line came within 5 s"),
            "{reply:?}"
        );
        std::fs::write(dir.path().join("enough"), b"").unwrap();
        let run = running.join().unwrap();
        assert_clean(&run);
    });
}
