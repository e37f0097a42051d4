//! Opening a trace file that no other process writes at the same time.
//!
//! A launcher and its children (an X server running GLX on Zink and the application it
//! serves) inherit one `GPU_TRACEFILE`; each would otherwise truncate and write over the
//! others' trace. The first process to open a path holds it: the file is opened without
//! truncating, an advisory lock (`flock(LOCK_EX | LOCK_NB)`) is taken at once, and only
//! then is it truncated. The lock lives as long as the returned file. A process that finds
//! the path held writes to a name of its own instead, its pid before the extension
//! (`gl.txt` -> `gl.12345.txt`), and says so once; if that name is held too, the caller
//! is told and writes elsewhere. Never into a held file.
//!
//! Only regular files are locked and truncated: a pipe or a device (`/dev/stderr`) is
//! meant to be shared, and is used as it is.
//!
//! Text traces, Perfetto traces and `utrace capture` outputs all open their file here.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// A trace file this process holds (or a pipe or device it writes to).
pub struct HeldFile {
    pub file: File,
    /// Where it is: the path asked for, or the pid-named one beside it.
    pub path: PathBuf,
    /// A regular file (locked, truncated, and which a failed write can be cut back on).
    pub regular: bool,
    /// The process's standard output (`/dev/stdout`, or the file it is redirected to):
    /// written through C's `stdout`, as when no file is named.
    pub stdout: bool,
}

/// Why no file was opened.
#[derive(Debug)]
pub enum Refused {
    /// The path cannot be opened (a missing folder, no permission, a folder there).
    Unopenable(io::Error),
    /// The path and its pid-named sibling are both held by other processes.
    BothHeld { pid_named: PathBuf },
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Unopenable(e) => e.fmt(f),
            Refused::BothHeld { pid_named } => write!(
                f,
                "it and {} are held by other processes",
                pid_named.display()
            ),
        }
    }
}

/// How a path may be opened.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Whatever is there, links followed: a text trace may go to a pipe or a device.
    Any,
    /// As [`Kind::Any`], but a FIFO that no one has open to read is refused at once instead
    /// of waited for: a capture's file, opened on the control thread (which waited there
    /// for good, the capture neither running nor stoppable).
    AnyNow,
    /// A regular file only, its last component never a link, a pipe never waited on: a file
    /// that is about to be replaced (Perfetto's), where anything else must be left alone.
    RegularOnly,
    /// As [`Kind::RegularOnly`], and this user's: a name the layer made up (the pid-named
    /// sibling), where a file of another user's is never truncated.
    OwnRegular,
}

/// Opens `path` for this process's trace (see the module's text); `what` names the trace
/// in the message said when another process holds the path.
pub fn open(path: &Path, what: &str) -> Result<HeldFile, Refused> {
    open_as(path, what, Kind::Any)
}

/// [`open`], for a path of `kind`.
pub fn open_as(path: &Path, what: &str, kind: Kind) -> Result<HeldFile, Refused> {
    match try_hold(path, kind).map_err(Refused::Unopenable)? {
        Some(held) => Ok(held),
        None => {
            // A name the layer made up, in a folder the path's owner may share: only a
            // regular file of this user's, never through a link (another user may have
            // put one there, knowing the pid).
            let pid_named = pid_named(path, std::process::id());
            match try_hold(&pid_named, Kind::OwnRegular) {
                Ok(Some(held)) => {
                    log::warn!(
                        "{what} {} is being written by another process; this process (pid {}) writes its trace to {} instead",
                        path.display(),
                        std::process::id(),
                        pid_named.display()
                    );
                    Ok(held)
                }
                Ok(None) => Err(Refused::BothHeld { pid_named }),
                Err(e) => Err(Refused::Unopenable(io::Error::new(
                    e.kind(),
                    format!(
                        "another process holds it, and {} cannot be opened: {e}",
                        pid_named.display()
                    ),
                ))),
            }
        }
    }
}

/// Opens `path` (created if missing, never truncated before the lock), then locks and
/// truncates it if it is a regular file. `None`: another open file description holds it.
fn try_hold(path: &Path, kind: Kind) -> io::Result<Option<HeldFile>> {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    let follows = matches!(kind, Kind::Any | Kind::AnyNow);
    if !follows {
        // A link fails (ELOOP), a pipe without a reader fails (ENXIO) instead of blocking.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    } else if kind == Kind::AnyNow {
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ENXIO) => io::Error::other("it is a FIFO that no one has open to read"),
        _ => e,
    })?;
    let meta = file.metadata()?;
    if follows {
        if let Some(held) = standard_stream(&meta, path) {
            return Ok(Some(held));
        }
    }
    let regular = meta.is_file();
    if !follows && !regular {
        return Err(io::Error::other("it is not a regular file"));
    }
    if kind == Kind::AnyNow && !regular {
        // Open now: its writes wait for the reader as any output's do.
        // SAFETY: F_GETFL/F_SETFL on the descriptor `file` keeps open.
        unsafe {
            let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if kind == Kind::OwnRegular && meta.uid() != unsafe { libc::geteuid() } {
        return Err(io::Error::other("it belongs to another user; refused"));
    }
    if regular {
        if !lock(&file)? {
            return Ok(None);
        }
        file.set_len(0)?;
    }
    Ok(Some(HeldFile {
        file,
        path: path.to_path_buf(),
        regular,
        stdout: false,
    }))
}

/// The process's standard output or error, when the file opened (`meta`) is the one
/// descriptor 1 or 2 writes: `/dev/stdout`, `/dev/stderr`, or the file either is redirected
/// to. Reopening it would start at its beginning and truncate it, over what the
/// application wrote (`app >> f` lost `f`); the descriptor itself is used instead, sharing
/// its offset and append mode, so the trace's records land between the application's
/// lines.
fn standard_stream(meta: &std::fs::Metadata, path: &Path) -> Option<HeldFile> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let same = |fd: std::os::fd::BorrowedFd<'_>| -> Option<File> {
        let file = File::from(fd.try_clone_to_owned().ok()?);
        let m = file.metadata().ok()?;
        (m.dev() == meta.dev() && m.ino() == meta.ino()).then_some(file)
    };
    let (file, stdout) = match same(io::stdout().as_fd()) {
        Some(file) => (file, true),
        None => (same(io::stderr().as_fd())?, false),
    };
    Some(HeldFile {
        file,
        path: path.to_path_buf(),
        regular: false,
        stdout,
    })
}

/// Takes an exclusive advisory lock on `file` without waiting: false when another open
/// file description holds one. A file system that has no such locks is written unlocked.
fn lock(file: &File) -> io::Result<bool> {
    // SAFETY: `flock` only acts on the descriptor, which `file` keeps open for the call.
    let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if result == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EWOULDBLOCK) => Ok(false),
        Some(libc::ENOLCK) | Some(libc::EOPNOTSUPP) | Some(libc::EINVAL) => {
            log::debug!("no advisory lock on this file system ({e}); the file is not guarded");
            Ok(true)
        }
        _ => Err(e),
    }
}

/// Takes the lock on `file` (opened elsewhere, e.g. a file Perfetto's service created);
/// false when another process holds it.
pub fn hold_existing(file: &File) -> io::Result<bool> {
    lock(file)
}

/// `path` with `pid` before its extension: `gl.txt` -> `gl.<pid>.txt`, `trace` ->
/// `trace.<pid>`, `.hidden` -> `.hidden.<pid>`.
pub fn pid_named(path: &Path, pid: u32) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let renamed = match name.rfind('.') {
        Some(dot) if dot > 0 => format!("{}.{pid}{}", &name[..dot], &name[dot..]),
        _ => format!("{name}.{pid}"),
    };
    path.with_file_name(renamed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("utrace-held-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_pid_goes_before_the_extension() {
        let at = |p: &str| pid_named(Path::new(p), 12345);
        assert_eq!(at("gl.txt"), PathBuf::from("gl.12345.txt"));
        assert_eq!(at("/t/gpu.pftrace"), PathBuf::from("/t/gpu.12345.pftrace"));
        assert_eq!(at("out/name"), PathBuf::from("out/name.12345"));
        assert_eq!(at("a.b.csv"), PathBuf::from("a.b.12345.csv"));
        assert_eq!(at(".trace"), PathBuf::from(".trace.12345"));
    }

    #[test]
    fn a_held_path_sends_the_next_opener_to_its_pid_named_sibling_then_refuses() {
        let dir = folder("held");
        let path = dir.join("gl.txt");
        std::fs::write(&path, "old content").unwrap();
        // Each open is a file description of its own: flock locks conflict between them
        // as between processes.
        let mut first = open(&path, "test trace").unwrap();
        assert_eq!(first.path, path);
        assert!(first.regular);
        assert_eq!(std::fs::read(&path).unwrap(), b"", "truncated once held");
        first.file.write_all(b"first").unwrap();

        let mut second = open(&path, "test trace").unwrap();
        let pid_path = pid_named(&path, std::process::id());
        assert_eq!(second.path, pid_path);
        second.file.write_all(b"second").unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"first",
            "the held file is untouched"
        );

        match open(&path, "test trace") {
            Err(Refused::BothHeld { pid_named }) => assert_eq!(pid_named, pid_path),
            other => panic!("expected a refusal, got {:?}", other.map(|h| h.path)),
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        assert_eq!(std::fs::read(&pid_path).unwrap(), b"second");

        // Released with the file: the path can be held again (and is truncated then).
        drop(first);
        let again = open(&path, "test trace").unwrap();
        assert_eq!(again.path, path);
        assert_eq!(std::fs::read(&path).unwrap(), b"");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_pid_named_sibling_is_never_a_link_nor_another_users_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = folder("sibling");
        let path = dir.join("gl.txt");
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let _first = open(&path, "test trace").unwrap();
        let pid_path = pid_named(&path, std::process::id());
        // A link planted at the sibling's name: refused, the victim untouched.
        std::os::unix::fs::symlink(&victim, &pid_path).unwrap();
        assert!(matches!(
            open(&path, "test trace"),
            Err(Refused::Unopenable(_))
        ));
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        // Another user's file there (as root, the test gives it to nobody): refused too.
        std::fs::remove_file(&pid_path).unwrap();
        std::fs::write(&pid_path, "theirs").unwrap();
        std::fs::set_permissions(&pid_path, std::fs::Permissions::from_mode(0o666)).unwrap();
        std::os::unix::fs::chown(&pid_path, Some(65534), Some(65534))
            .expect("the test gives a file to nobody: run it as root");
        match open(&path, "test trace") {
            Err(Refused::Unopenable(e)) => assert!(e.to_string().contains("another user"), "{e}"),
            other => panic!("expected a refusal, got {:?}", other.map(|h| h.path)),
        }
        assert_eq!(std::fs::read(&pid_path).unwrap(), b"theirs");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unopenable_path_is_refused_and_a_device_is_used_unlocked() {
        match open(Path::new("/nonexistent-utrace-dir/gl.txt"), "test trace") {
            Err(Refused::Unopenable(_)) => {}
            other => panic!("expected Unopenable, got {:?}", other.map(|h| h.path)),
        }
        let first = open(Path::new("/dev/null"), "test trace").unwrap();
        let second = open(Path::new("/dev/null"), "test trace").unwrap();
        assert!(!first.regular && !second.regular);
        assert_eq!(
            second.path,
            PathBuf::from("/dev/null"),
            "not locked: shared"
        );
    }
}
