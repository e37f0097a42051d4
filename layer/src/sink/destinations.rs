//! The text outputs of this process, by destination: stdout, or a `GPU_TRACEFILE` path with
//! `%p`/`%i` expanded. The first device that names a destination opens it and starts its
//! writer; every later device gets the same [`Output`], so devices sharing a path write
//! whole batches into one file instead of truncating each other's. The file itself is
//! opened when the first batch comes, and held against other processes
//! ([`super::target`], [`super::held_file`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::output::Output;
use super::writer;
use crate::config::{expand_path, Destination};

#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    Stdout,
    File(PathBuf),
}

static OUTPUTS: LazyLock<Mutex<HashMap<Key, Output>>> = LazyLock::new(Default::default);

/// The output for `destination` as device `device_index` sees it (`%i` expanded). A file
/// that cannot be opened when the first batch comes is reported then, and stdout is used
/// instead.
pub fn open(destination: &Destination, device_index: u32) -> Output {
    let key = match destination {
        Destination::Stdout => Key::Stdout,
        Destination::File(template) => {
            Key::File(expand_path(template, std::process::id(), device_index))
        }
    };
    OUTPUTS
        .lock()
        .entry(key)
        .or_insert_with_key(|key| match key {
            Key::Stdout => writer::start_stdout(),
            Key::File(path) => writer::start_file(path, "GPU_TRACEFILE"),
        })
        .clone()
}

/// Waits, at most `timeout` in all, until every output of the process has written what it
/// holds; reports on stderr what is still unwritten. For process exit.
pub fn drain_all(timeout: Duration) {
    let outputs: Vec<Output> = OUTPUTS.lock().values().cloned().collect();
    let deadline = Instant::now() + timeout;
    for output in outputs {
        let left = output.drain(deadline.saturating_duration_since(Instant::now()));
        if left > 0 && output.loss_unsaid(left) {
            log::error!(
                "{left} batch(es) could not be written to {} before exit (it took no data); they are lost",
                output.name()
            );
        }
        if output.untouched_unsaid() {
            log::info!(
                "nothing was traced to {}: the path was left as it was",
                output.name()
            );
        }
    }
}
