//! Where the in-process session's trace goes, and when the configured path is touched.
//!
//! Perfetto's service creates the file it writes itself, exclusively (`O_CREAT | O_EXCL`:
//! it follows no link and truncates nothing), so it cannot write into a file this process
//! opened and holds. A session therefore writes into a staging file of this process's own
//! ([`staging_file`]: beside the path, or in `$TMPDIR` when the path's folder cannot be
//! written). When the first batch is traced, [`claim`] holds the configured path as text
//! traces do ([`crate::sink::held_file`]: the first process holds it, another writes to a
//! pid-named file beside it), locks the staging file and renames it over the held path:
//! from then on the path's file is the service's, locked by this process. A session that
//! traced nothing removes its staging file and never touches the path.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::sink::held_file::{self, HeldFile, Kind};

/// The file a session writes into until its first batch: `.<name>.utrace-<pid>` beside
/// `path` if that folder can be written, else the fallback in `$TMPDIR`.
pub fn staging_file(path: &Path) -> PathBuf {
    let pid = std::process::id();
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let beside = path.with_file_name(format!(".{name}.utrace-{pid}"));
    // A path the trace cannot replace (see `claim`) sends it to the fallback from the start.
    if !not_a_file(path) && probe(&beside).is_ok() {
        beside
    } else {
        fallback_path()
    }
}

/// Holds `path` for the trace the service writes into `staging` (a batch was traced):
/// the trace is then at the returned file's path. Says once where it went when that is
/// not `path`.
pub fn claim(path: &Path, staging: &Path) -> Option<HeldFile> {
    // Only this process knows the staging name; locked now so that the path, once renamed,
    // is held.
    let file = match File::options().append(true).open(staging) {
        Ok(file) => file,
        Err(e) => {
            log::error!(
                "the Perfetto session's file {} cannot be opened ({e}); the trace is not recorded",
                staging.display()
            );
            return None;
        }
    };
    let _ = held_file::hold_existing(&file);
    let in_fallback = staging.parent() == Some(std::env::temp_dir().as_path())
        && staging.parent() != path.parent();
    // The held path stays held (its old file locked) until the staging file replaces it.
    // Only a regular file (or nothing) is replaced: a link (its target never opened, the
    // link kept), a device, a pipe, a socket or a folder is left alone.
    let opened = match not_a_file(path) {
        true => Err(held_file::Refused::Unopenable(std::io::Error::other(
            NOT_A_FILE,
        ))),
        false => held_file::open_as(path, "the Perfetto trace", Kind::RegularOnly),
    };
    let (target, _held_until_renamed, refused) = match opened {
        Ok(held) => (held.path.clone(), Some(held), None),
        Err(refused) if in_fallback => (staging.to_path_buf(), None, Some(refused)),
        Err(refused) => (fallback_path(), None, Some(refused)),
    };
    let at = if target == staging {
        target
    } else {
        match std::fs::rename(staging, &target) {
            Ok(()) => target,
            Err(e) => {
                log::error!(
                    "could not move the Perfetto trace from {} to {} ({e}); it stays in {}",
                    staging.display(),
                    target.display(),
                    staging.display()
                );
                staging.to_path_buf()
            }
        }
    };
    if let Some(refused) = refused {
        log::error!(
            "cannot create the Perfetto trace {} ({refused}); writing it to {} instead",
            path.display(),
            at.display()
        );
    }
    Some(HeldFile {
        file,
        path: at,
        regular: true,
        stdout: false,
    })
}

const NOT_A_FILE: &str = "it is not a regular file (a link, a device, a pipe, a socket or a folder), which a Perfetto trace never replaces";

/// Something other than a regular file is at `path` (looked at without following a link).
fn not_a_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file())
}

/// Makes sure `path` can be created exclusively by the service: a probe is created there
/// with `O_CREAT | O_EXCL` and removed again.
fn probe(path: &Path) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    std::fs::remove_file(path)
}

/// `$TMPDIR/utrace-<pid>.pftrace`, or `utrace-<pid>-N.pftrace` for the first N that is free:
/// a shared folder may hold anything, so nothing there is replaced or followed.
fn fallback_path() -> PathBuf {
    fallback_in(&std::env::temp_dir(), std::process::id())
}

fn fallback_in(dir: &Path, pid: u32) -> PathBuf {
    (0..1000)
        .map(|n| match n {
            0 => dir.join(format!("utrace-{pid}.pftrace")),
            n => dir.join(format!("utrace-{pid}-{n}.pftrace")),
        })
        .find(|candidate| probe(candidate).is_ok())
        .unwrap_or_else(|| dir.join(format!("utrace-{pid}.pftrace")))
}

/// A free file beside `path` for a later session of the process.
pub fn later_session_file(path: &Path) -> Option<PathBuf> {
    (1..1000)
        .map(|n| {
            let mut name = path.as_os_str().to_owned();
            name.push(format!(".session-{n}"));
            PathBuf::from(name)
        })
        .find(|candidate| probe(candidate).is_ok())
}

/// Appends the trace in `from` to `to` (concatenated traces are one trace) and removes it.
pub fn append_and_remove(from: &Path, mut to: &File) -> std::io::Result<()> {
    let mut source = File::open(from)?;
    std::io::copy(&mut source, &mut to)?;
    std::fs::remove_file(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary folder, removed when dropped.
    struct Folder(PathBuf);

    impl Folder {
        fn new(name: &str) -> Folder {
            let dir =
                std::env::temp_dir().join(format!("utrace-unit-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Folder(dir)
        }
    }

    impl Drop for Folder {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_fallback_follows_no_planted_link_and_replaces_nothing() {
        let folder = Folder::new("fallback");
        let victim = folder.0.join("victim");
        std::fs::write(&victim, "someone else's file").unwrap();
        // Planted where the trace of pid 4242 would go, and a file at the next name.
        std::os::unix::fs::symlink(&victim, folder.0.join("utrace-4242.pftrace")).unwrap();
        std::fs::write(folder.0.join("utrace-4242-1.pftrace"), "taken").unwrap();
        let chosen = fallback_in(&folder.0, 4242);
        assert_eq!(chosen, folder.0.join("utrace-4242-2.pftrace"));
        assert!(
            !chosen.exists(),
            "left for the service to create exclusively"
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "someone else's file"
        );
        assert_eq!(
            std::fs::read_to_string(folder.0.join("utrace-4242-1.pftrace")).unwrap(),
            "taken"
        );
    }

    #[test]
    fn a_link_a_pipe_or_a_device_at_the_path_is_left_alone() {
        let folder = Folder::new("not-a-file");
        let victim = folder.0.join("victim");
        std::fs::write(&victim, "someone else's file").unwrap();
        let link = folder.0.join("link.pftrace");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let fifo = folder.0.join("fifo.pftrace");
        let c_fifo = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o600) }, 0);
        for path in [&link, &fifo, &PathBuf::from("/dev/null")] {
            let staging = staging_file(path);
            assert_ne!(
                staging.parent(),
                path.parent(),
                "{}: staged elsewhere",
                path.display()
            );
            std::fs::write(&staging, "a trace").unwrap();
            let held = claim(path, &staging).unwrap();
            assert_ne!(&held.path, path);
            assert_eq!(std::fs::read_to_string(&held.path).unwrap(), "a trace");
            let _ = std::fs::remove_file(&held.path);
        }
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "someone else's file"
        );
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        assert!(std::fs::symlink_metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn a_claimed_staging_file_becomes_the_held_path_and_a_second_goes_pid_named() {
        let folder = Folder::new("claim");
        let path = folder.0.join("gpu.pftrace");
        std::fs::write(&path, "an old trace").unwrap();
        let staging = staging_file(&path);
        assert_eq!(
            staging.parent(),
            Some(folder.0.as_path()),
            "beside the path"
        );
        std::fs::write(&staging, "session one").unwrap();
        let first = claim(&path, &staging).unwrap();
        assert_eq!(first.path, path);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "session one");
        assert!(!staging.exists());

        // A second claim (its own file description, as another process's) finds it held.
        std::fs::write(&staging, "session two").unwrap();
        let second = claim(&path, &staging).unwrap();
        let pid_path = held_file::pid_named(&path, std::process::id());
        assert_eq!(second.path, pid_path);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "session one");
        assert_eq!(std::fs::read_to_string(&pid_path).unwrap(), "session two");
    }
}
