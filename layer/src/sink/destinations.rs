//! The text outputs of this process, by destination: stdout, or a `GPU_TRACEFILE` path with
//! `%p`/`%i` expanded. The first device that names a destination opens it and starts its
//! writer; every later device gets the same [`Output`], so devices sharing a path write
//! whole batches into one file instead of truncating each other's.

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
/// that cannot be created is reported once and stdout is used instead.
pub fn open(destination: &Destination, device_index: u32) -> Output {
    let key = match destination {
        Destination::Stdout => Key::Stdout,
        Destination::File(template) => {
            Key::File(expand_path(template, std::process::id(), device_index))
        }
    };
    let mut outputs = OUTPUTS.lock();
    if let Some(output) = outputs.get(&key) {
        return output.clone();
    }
    let output = match &key {
        Key::Stdout => writer::start_stdout(),
        Key::File(path) => match writer::start_file(path) {
            Ok(output) => output,
            Err(e) => {
                log::error!(
                    "cannot open GPU_TRACEFILE {} ({e}); writing the trace to stdout instead",
                    path.display()
                );
                // Kept under the path too: later devices use it without trying again.
                outputs
                    .entry(Key::Stdout)
                    .or_insert_with(writer::start_stdout)
                    .clone()
            }
        },
    };
    outputs.insert(key, output.clone());
    output
}

/// Waits, at most `timeout` in all, until every output of the process has written what it
/// holds; reports on stderr what is still unwritten. For process exit.
pub fn drain_all(timeout: Duration) {
    let outputs: Vec<Output> = OUTPUTS.lock().values().cloned().collect();
    let deadline = Instant::now() + timeout;
    for output in outputs {
        let left = output.drain(deadline.saturating_duration_since(Instant::now()));
        if left > 0 {
            log::error!(
                "{left} batch(es) could not be written to {} before exit (it took no data); they are lost",
                output.name()
            );
        }
    }
}
