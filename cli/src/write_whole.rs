//! Writes a file a user named (`convert`, `view`, `install`): whole, and by the rules the
//! layer's own outputs follow, since the command may run as root beside other users; and
//! prepares by the same rules a file the application is to write (`run`'s trace).
//!
//! - `-`: standard output.
//! - Nothing there, or a regular file: written into a new file of an unpredictable name in
//!   the same folder (created exclusively, so nothing planted there is followed), then
//!   renamed over the path, so that nothing ever reads half of it (a loader a half-copied
//!   library, a user a torn trace) and a failed write leaves what was there before.
//! - A device or a FIFO: written through, never replaced (`/dev/null`, a pipe; `/dev/full`
//!   reports that it is full).
//! - A symbolic link, anywhere in the path: followed only when the caller (or root:
//!   `/dev/stdout`) owns it and no one else can write the folder it is in; otherwise
//!   refused, since another user could have put it there. The path is walked one
//!   component at a time through folder descriptors ([`walk`]), and the file is written
//!   through the last one's.
//! - The process's own standard output or error (`/dev/stdout`, or the file it is
//!   redirected to): written to that descriptor, never reopened (which would start the file
//!   over).
//! - A device or a FIFO of another user's (who would read it), and anything else (a
//!   folder, a socket): refused.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

mod walk;
pub use walk::closed as folder_closed_to_others;

use walk::{walk, Leaf};

pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let stream = if path == Path::new("-") {
        Some(1)
    } else {
        standard_stream(path)
    };
    match stream {
        Some(1) => {
            let mut out = std::io::stdout().lock();
            return out
                .write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|e| format!("standard output: {e}"));
        }
        Some(_) => {
            return std::io::stderr()
                .write_all(bytes)
                .map_err(|e| format!("standard error: {e}"))
        }
        None => {}
    }
    let walked = walk(path)?;
    match walked.leaf {
        Leaf::Missing | Leaf::Regular { .. } => {
            replace(&walked.folder, &walked.name, bytes).map_err(|e| err(refusal(e, &walked.leaf)))
        }
        Leaf::Through => write_through(&walked.folder, &walked.name, bytes).map_err(err),
    }
}

/// 1 or 2 when `path` is the file this process's standard output or error writes
/// (`/dev/stdout`, `/dev/fd/2`, or the file either is redirected to).
fn standard_stream(path: &Path) -> Option<i32> {
    use std::os::fd::AsFd;
    let meta = std::fs::metadata(path).ok()?;
    let same = |fd: std::os::fd::BorrowedFd<'_>| {
        let file = File::from(fd.try_clone_to_owned().ok()?);
        let m = file.metadata().ok()?;
        Some(m.dev() == meta.dev() && m.ino() == meta.ino())
    };
    if same(std::io::stdout().as_fd()) == Some(true) {
        Some(1)
    } else if same(std::io::stderr().as_fd()) == Some(true) {
        Some(2)
    } else {
        None
    }
}

/// Where another process (the application, through the layer) is to write a trace the
/// user named, by the rules above ([`for_writer`]).
#[derive(Debug, PartialEq, Eq)]
pub enum ForWriter {
    /// A regular file (new and empty when asked `fresh`), by a path with no link in it, in
    /// folders no other user can change: the writer opens it by this path.
    File(PathBuf),
    /// A device, a FIFO or a standard stream of this process's, written through as it is.
    Through(PathBuf),
}

/// Prepares `path` for another process to write by name. With `fresh`, a regular file there
/// is removed (a trace left from before must not pass for this one's) and a new empty one
/// created in its place (exclusively, never through a link); without, what is there is left
/// for the writer (which may find it held by another process and write beside it). A device
/// or a FIFO is left as it is, to be written through. Refused: what [`write_whole`]
/// refuses, and a path where another user could rename a folder or put a link in place of
/// the file before the writer opens it (a folder on the way writable by others and not
/// sticky, or someone else's).
pub fn for_writer(path: &Path, fresh: bool) -> Result<ForWriter, String> {
    if standard_stream(path).is_some() {
        return Ok(ForWriter::Through(path.to_path_buf()));
    }
    let walked = walk(path)?;
    if let Some(why) = &walked.swappable {
        return Err(format!(
            "{}: {why}, and could put a link there before the application opens the trace; refused: name a file in a folder of yours",
            path.display()
        ));
    }
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    match walked.leaf {
        Leaf::Through => return Ok(ForWriter::Through(walked.path())),
        Leaf::Regular { .. } if fresh => {
            unlink_at(&walked.folder, &walked.name).map_err(|e| err(refusal(e, &walked.leaf)))?
        }
        // Left for the writer: a file another user owns would be theirs to read.
        Leaf::Regular { uid } if !fresh && uid != walk::ids().0 && uid != 0 => {
            return Err(format!(
                "{}: a file of user {uid}'s, who would read what is written to it; refused",
                path.display()
            ))
        }
        Leaf::Regular { .. } | Leaf::Missing if !fresh => {
            return Ok(ForWriter::File(walked.path()))
        }
        _ => {}
    }
    create_at(&walked.folder, &walked.name)
        .map(|_| ForWriter::File(walked.path()))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => format!(
                "{}: something was put there while it was being replaced; refused",
                path.display()
            ),
            _ => err(e),
        })
}

/// A failure to replace a regular file, said with why where another user owns it (a sticky
/// folder lets only its owner remove or replace it).
fn refusal(e: std::io::Error, leaf: &Leaf) -> std::io::Error {
    match leaf {
        Leaf::Regular { uid } if *uid != walk::ids().0 && e.kind() == std::io::ErrorKind::PermissionDenied => {
            std::io::Error::other(format!(
                "{e}: the file is user {uid}'s, in a folder where only its owner may replace it; refused"
            ))
        }
        _ => e,
    }
}

fn c_name(name: &OsStr) -> std::io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL in the name"))
}

/// `name` opened in `folder` with `flags` (never through a link), created 0666 (less the
/// umask) where `flags` say so.
fn open_in(folder: &File, name: &OsStr, flags: i32) -> std::io::Result<File> {
    let c = c_name(name)?;
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: an open folder descriptor, a NUL-terminated name; the mode is read only with
    // O_CREAT.
    let fd = unsafe { libc::openat(folder.as_raw_fd(), c.as_ptr(), flags, 0o666 as libc::c_uint) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

fn create_at(folder: &File, name: &OsStr) -> std::io::Result<File> {
    open_in(folder, name, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL)
}

fn unlink_at(folder: &File, name: &OsStr) -> std::io::Result<()> {
    let c = c_name(name)?;
    // SAFETY: an open folder descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(folder.as_raw_fd(), c.as_ptr(), 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Writes `bytes` into a new file in `folder` with a name no one can guess (created
/// exclusively, never through a link), then renames it over `name` there.
fn replace(folder: &File, name: &OsStr, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = OsString::from(format!(".utrace-{:016x}", unguessable()?));
    let written =
        create_at(folder, &tmp).and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
    let done = written.and_then(|()| {
        let (from, to) = (c_name(&tmp)?, c_name(name)?);
        let fd = folder.as_raw_fd();
        // SAFETY: an open folder descriptor and two NUL-terminated names in it.
        if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    });
    if done.is_err() {
        let _ = unlink_at(folder, &tmp);
    }
    done
}

/// How long a FIFO is given for its reader to open it.
const READER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Writes `bytes` to the device or FIFO `name` in `folder`, as it is (never created or
/// truncated). A FIFO's reader may come a moment after (`utrace convert -o p & cat p`): it
/// is given [`READER_WAIT`], then the FIFO is said unread rather than waited on for ever.
fn write_through(folder: &File, name: &OsStr, bytes: &[u8]) -> std::io::Result<()> {
    let started = std::time::Instant::now();
    let mut f = loop {
        match open_in(folder, name, libc::O_WRONLY | libc::O_NONBLOCK) {
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if started.elapsed() >= READER_WAIT {
                    return Err(std::io::Error::other(format!(
                        "a FIFO that no one opened to read within {READER_WAIT:?}; nothing written"
                    )));
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other?,
        }
    };
    // Written whole, waiting for a slow reader, once one is there.
    // SAFETY: F_GETFL/F_SETFL on a descriptor `f` keeps open.
    unsafe {
        let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    f.write_all(bytes).and_then(|()| f.flush())
}

/// 64 random bits, for names no one can guess.
pub fn unguessable() -> std::io::Result<u64> {
    let mut bytes = [0u8; 8];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(u64::from_ne_bytes(bytes))
}

#[cfg(test)]
mod tests;
