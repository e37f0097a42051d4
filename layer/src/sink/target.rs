//! Where one output's writer ([`super::writer`]) puts its records: stdout, a file, or a
//! file not opened yet.
//!
//! A `GPU_TRACEFILE` is opened (and held, [`super::held_file`]) only when the first batch
//! comes: a process that creates devices but traces nothing (an X server whose GLX runs on
//! Zink, beside the application it serves) leaves the path as it was. Records that carry
//! no batch (a frame end, a device's end that wrote and lost nothing) wait until then, and
//! are written first; if no batch ever comes they are dropped with the file never touched.
//! A device's end that counts lost batches opens the file too: its losses are worth saying.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::c_stdout;
use super::held_file::{self, HeldFile, Refused};
use super::record_queue::Shared;

pub(super) enum Target {
    Stdout,
    File {
        file: File,
        /// A regular file, which a failed write can be truncated back on.
        seekable: bool,
        /// Where the last whole record ends.
        end: u64,
        /// Bytes of the streamed batch in progress written after `end`.
        pending: u64,
    },
    /// A path opened when the first batch comes.
    Unopened {
        path: PathBuf,
        /// What the path is, in messages ("GPU_TRACEFILE").
        what: &'static str,
        /// Records without a batch that came first, written once the file is open.
        early: Vec<String>,
    },
}

impl Target {
    pub fn held(held: HeldFile) -> Target {
        if held.stdout {
            return Target::Stdout;
        }
        Target::File {
            file: held.file,
            seekable: held.regular,
            end: 0,
            pending: 0,
        }
    }

    /// Keeps a record that carries no batch until the file is opened; true when kept.
    pub fn keep_early(&mut self, text: &str) -> bool {
        match self {
            Target::Unopened { early, .. } => {
                early.push(text.to_owned());
                true
            }
            _ => false,
        }
    }

    /// Opens the path of an unopened target (a batch came), telling `shared` where the
    /// trace goes; a path that cannot be opened or is held is reported once and stdout is
    /// used instead. Returns the records kept until now, to write first.
    pub fn open(&mut self, shared: &Shared) -> Vec<String> {
        let Target::Unopened { path, what, early } = self else {
            return Vec::new();
        };
        let early = std::mem::take(early);
        *self = match held_file::open(path, what) {
            Ok(held) => {
                shared.streams.store(held.regular, Ordering::Relaxed);
                let _ = shared.opened.set(held.path.display().to_string());
                Target::held(held)
            }
            Err(refused) => {
                match refused {
                    Refused::Unopenable(e) => log::error!(
                        "cannot open {what} {} ({e}); writing the trace to stdout instead",
                        path.display()
                    ),
                    Refused::BothHeld { pid_named } => log::warn!(
                        "{what} {} and {} are being written by other processes; writing this process's trace to stdout instead",
                        path.display(),
                        pid_named.display()
                    ),
                }
                let _ = shared.opened.set("stdout".into());
                Target::Stdout
            }
        };
        early
    }

    /// Writes `bytes`: a whole record's last piece (`whole`), or a part of a batch whose
    /// end is still to come.
    pub fn write(&mut self, bytes: &[u8], whole: bool) -> io::Result<()> {
        match self {
            Target::Stdout => c_stdout::write(bytes),
            Target::Unopened { .. } => Err(io::Error::other("the file is not open")),
            Target::File {
                file, end, pending, ..
            } => match file.write_all(bytes) {
                Ok(()) => {
                    *pending += bytes.len() as u64;
                    if whole {
                        *end += std::mem::take(pending);
                    }
                    Ok(())
                }
                Err(e) => {
                    self.abandon();
                    Err(e)
                }
            },
        }
    }

    /// Takes back what was written of the record in progress (truncating a regular file
    /// back to the end of the last whole record). If that fails, says so: the file may
    /// then hold a torn record.
    pub fn abandon(&mut self) {
        if let Target::File {
            file,
            seekable: true,
            end,
            pending,
        } = self
        {
            *pending = 0;
            let undone = file
                .set_len(*end)
                .and_then(|()| file.seek(SeekFrom::Start(*end)).map(|_| ()));
            if let Err(u) = undone {
                log::error!("could not undo a partly written trace record ({u})");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::held_file::pid_named;

    fn unopened(path: &std::path::Path) -> Target {
        Target::Unopened {
            path: path.to_path_buf(),
            what: "GPU_TRACEFILE",
            early: Vec::new(),
        }
    }

    #[test]
    fn early_records_wait_for_the_first_batch_and_the_file_is_held_then() {
        let dir = std::env::temp_dir().join(format!("utrace-target-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("gl.txt");
        std::fs::write(&path, "kept until a batch comes").unwrap();
        let shared = Shared::new(path.display().to_string(), false);
        let mut target = unopened(&path);
        assert!(target.keep_early("END OF FRAME 0\n"));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "kept until a batch comes"
        );
        assert!(shared.opened.get().is_none());
        assert_eq!(target.open(&shared), ["END OF FRAME 0\n"]);
        assert!(matches!(target, Target::File { seekable: true, .. }));
        assert!(
            shared.streams.load(Ordering::Relaxed),
            "a regular file streams"
        );
        assert_eq!(shared.name(), path.display().to_string());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "", "truncated");
        assert!(
            !target.keep_early("END OF FRAME 1\n"),
            "open: written at once"
        );

        // The path and its pid-named sibling both held (here by this process's own open
        // file descriptions): the next output goes to stdout, never into either.
        let _sibling = held_file::open(&path, "test").unwrap();
        assert_eq!(_sibling.path, pid_named(&path, std::process::id()));
        let shared = Shared::new(path.display().to_string(), false);
        let mut third = unopened(&path);
        third.open(&shared);
        assert!(matches!(third, Target::Stdout));
        assert_eq!(shared.name(), "stdout");
        assert!(!shared.streams.load(Ordering::Relaxed));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unopenable_path_goes_to_stdout() {
        let path = std::path::Path::new("/nonexistent-utrace-dir/gl.txt");
        let shared = Shared::new(path.display().to_string(), false);
        let mut target = unopened(path);
        target.open(&shared);
        assert!(matches!(target, Target::Stdout));
        assert_eq!(shared.name(), "stdout");
    }
}
