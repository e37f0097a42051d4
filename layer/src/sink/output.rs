//! Where a trace goes: stdout, or the `GPU_TRACEFILE` path with `%p`/`%i` expanded.
//!
//! Devices whose paths expand to the same file share one handle, so their batches never
//! overwrite each other. Each write is one whole batch and is flushed at once, so a process
//! that dies leaves every batch written so far. A file that cannot be created is reported
//! once on stderr and the trace goes to stdout instead.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use crate::config::{expand_path, Destination};

#[derive(Clone)]
pub enum Output {
    Stdout,
    File(Arc<Mutex<File>>),
}

type SharedFile = Arc<Mutex<File>>;

/// Files opened by this process, by path; `None` for a path that could not be opened.
static FILES: LazyLock<Mutex<HashMap<PathBuf, Option<SharedFile>>>> =
    LazyLock::new(Default::default);

impl Output {
    pub fn open(destination: &Destination, device_index: u32) -> Output {
        let Destination::File(template) = destination else {
            return Output::Stdout;
        };
        let path = expand_path(template, std::process::id(), device_index);
        let mut files = FILES.lock();
        let entry = files
            .entry(path.clone())
            .or_insert_with(|| match File::create(&path) {
                Ok(f) => Some(Arc::new(Mutex::new(f))),
                Err(e) => {
                    log::error!(
                        "cannot open GPU_TRACEFILE {} ({e}); writing the trace to stdout instead",
                        path.display()
                    );
                    None
                }
            });
        match entry {
            Some(file) => Output::File(Arc::clone(file)),
            None => Output::Stdout,
        }
    }

    /// Writes `bytes` in one piece and flushes. Errors are reported once per output.
    pub fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Output::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Output::File(file) => {
                let mut file = file.lock();
                file.write_all(bytes)?;
                file.flush()
            }
        }
    }
}
