//! A child process run to completion within a limit (a hang fails the test instead of
//! stalling it), its output pipes drained on threads, optionally signalled partway.

use std::process::{Command, Stdio};

/// How long one workload run may take: a hang fails the test instead of stalling it.
pub(super) const RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Reads a child's stdout (on a thread of its own) and returns what the test keeps of it.
pub type StdoutReader = Box<dyn FnOnce(std::process::ChildStdout) -> Vec<u8> + Send>;

/// Reads all of it.
pub(super) fn read_all(mut out: std::process::ChildStdout) -> Vec<u8> {
    use std::io::Read;
    let mut v = Vec::new();
    let _ = out.read_to_end(&mut v);
    v
}

/// Runs `cmd` to completion, killing it (and failing the test) after `limit`.
pub(super) fn output_within(cmd: Command, limit: std::time::Duration) -> std::process::Output {
    output_reading(cmd, limit, Box::new(read_all))
}

/// [`output_within`], with the child's stdout given to `reader`.
pub(super) fn output_reading(
    cmd: Command,
    limit: std::time::Duration,
    reader: StdoutReader,
) -> std::process::Output {
    output_signalled(cmd, limit, reader, None)
}

/// A signal to send the child after a while, and when it was sent (`CLOCK_BOOTTIME`).
pub struct Kill {
    /// Counted from when `from` exists (a workload's `--ready-file`), else from the start.
    pub after: std::time::Duration,
    pub from: Option<std::path::PathBuf>,
    pub signal: i32,
    pub sent_boot_ns: u64,
}

/// [`output_reading`], sending `kill.signal` to the child `kill.after` it started.
pub(super) fn output_signalled(
    mut cmd: Command,
    limit: std::time::Duration,
    reader: StdoutReader,
    mut kill: Option<&mut Kill>,
) -> std::process::Output {
    use std::io::Read;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the workload starts");
    // Drain both pipes on threads so that a chatty child never blocks on a full pipe.
    let out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || reader(out));
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let started = std::time::Instant::now();
    let mut kill_from = None;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the workload") {
            break status;
        }
        if let Some(k) = kill.as_mut() {
            if kill_from.is_none() && k.from.as_ref().is_none_or(|f| f.exists()) {
                kill_from = Some(std::time::Instant::now());
            }
            let due = kill_from.is_some_and(|at| at.elapsed() >= k.after);
            if k.sent_boot_ns == 0 && due {
                k.sent_boot_ns = crate::vk::boottime_ns();
                // SAFETY: signalling our own child, which has not been reaped (try_wait
                // above returned None).
                unsafe { libc::kill(child.id() as i32, k.signal) };
            }
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the workload did not finish within {limit:?}: a hang");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    std::process::Output {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    }
}
