//! Reaching a workload's control socket from a test: finding the socket the layer made in
//! the run's runtime folder (the harness sets `XDG_RUNTIME_DIR` to `dir/xdg`), and running
//! the `utrace` command against it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::harness::{utrace_exe, TempDir};

/// The workload's socket in `dir/xdg/utrace`, once it exists (None after `within`).
pub fn socket(dir: &TempDir, within: Duration) -> Option<PathBuf> {
    let folder = dir.path().join("xdg/utrace");
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = std::fs::read_dir(&folder).ok().and_then(|d| {
            d.flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|e| e == "sock"))
        }) {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pid a socket is named after.
pub fn pid_of(socket: &Path) -> String {
    socket.file_stem().unwrap().to_string_lossy().into_owned()
}

/// `utrace ARGS` with the run's runtime folder, in `dir`.
pub fn utrace(dir: &TempDir, args: &[&str]) -> Output {
    Command::new(utrace_exe())
        .args(args)
        .env("XDG_RUNTIME_DIR", dir.path().join("xdg"))
        .current_dir(dir.path())
        .output()
        .expect("utrace runs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
