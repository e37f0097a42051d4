//! A tracing service and a consumer for the tests, in processes of their own, as `traced`
//! and the `perfetto` command would be: `utrace-mini-traced` (tests/traced) serves the
//! producer and consumer sockets, `utrace-perfetto-record` (tests/record) starts and stops
//! a session on request and writes its trace.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::target_dir;

/// A helper binary of this build's profile.
fn helper(name: &str) -> PathBuf {
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let exe = target_dir().join(profile).join(name);
    assert!(
        exe.exists(),
        "{} is missing: build it first (cargo build -p {name})",
        exe.display()
    );
    exe
}

/// The tracing service, killed when dropped.
pub struct MiniTraced {
    child: Child,
    pub producer_socket: PathBuf,
    pub consumer_socket: PathBuf,
}

impl MiniTraced {
    /// Starts the service on two sockets in `dir` and waits until both listen.
    pub fn start(dir: &Path) -> MiniTraced {
        let producer_socket = dir.join("producer.sock");
        let consumer_socket = dir.join("consumer.sock");
        let child = Command::new(helper("utrace-mini-traced"))
            .arg(&producer_socket)
            .arg(&consumer_socket)
            .spawn()
            .expect("utrace-mini-traced starts");
        let started = Instant::now();
        while !(producer_socket.exists() && consumer_socket.exists()) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the service's sockets did not appear"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        MiniTraced {
            child,
            producer_socket,
            consumer_socket,
        }
    }
}

impl Drop for MiniTraced {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A recording session, running between [`Recording::start`] and [`Recording::stop`].
pub struct Recording {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Recording {
    /// Starts a session that enables `gpu.renderstages.utrace`, writing to `out` when it
    /// stops; returns once the service started it.
    pub fn start(service: &MiniTraced, out: &Path) -> Recording {
        let mut child = Command::new(helper("utrace-perfetto-record"))
            .arg(out)
            .env("PERFETTO_CONSUMER_SOCK_NAME", &service.consumer_socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("utrace-perfetto-record starts");
        let stdin = child.stdin.take().expect("piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the recorder answers");
        assert_eq!(line.trim(), "started", "the session started");
        Recording {
            child,
            stdin,
            stdout,
        }
    }

    /// Stops the session; returns once its trace is written.
    pub fn stop(mut self) {
        writeln!(self.stdin, "stop").expect("the recorder listens");
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("the recorder answers");
        assert!(
            line.starts_with("written "),
            "the trace was written: {line:?}"
        );
        let status = self.child.wait().expect("the recorder exits");
        assert!(status.success());
    }
}
