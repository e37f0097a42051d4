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
//! - A symbolic link: followed only when the caller (or root: `/dev/stdout`) owns it and no
//!   one else can write the folder it is in (then its target follows these rules);
//!   otherwise refused, since another user could have put it there.
//! - Anything else (a folder, a socket): refused.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Links followed at most, one after the other.
const MAX_LINKS: usize = 8;

pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(bytes)
            .and_then(|()| out.flush())
            .map_err(|e| format!("standard output: {e}"));
    }
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let target = match resolve(path)? {
        Resolved::Path(target) => target,
        Resolved::LinkToDevice(link) => return write_through(&link, bytes, true).map_err(err),
    };
    match std::fs::symlink_metadata(&target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => replace(&target, bytes).map_err(err),
        Err(e) => Err(err(e)),
        Ok(meta) => {
            let kind = meta.file_type();
            if kind.is_file() {
                replace(&target, bytes).map_err(err)
            } else if written_through(&kind) {
                write_through(&target, bytes, false).map_err(err)
            } else {
                Err(format!(
                    "{}: not a regular file, a device or a FIFO; refused",
                    path.display()
                ))
            }
        }
    }
}

/// Where another process (the application, through the layer) is to write a trace the
/// user named, by the rules above ([`for_writer`]).
#[derive(Debug, PartialEq, Eq)]
pub enum ForWriter {
    /// A regular file (new and empty when asked `fresh`) in a folder no other user can
    /// change: the writer opens it by this path.
    File(PathBuf),
    /// A device or a FIFO (or a link to one that may be followed), written through as it is.
    Through(PathBuf),
}

/// Prepares `path` for another process to write by name. With `fresh`, a regular file there
/// is removed (a trace left from before must not pass for this one's) and a new empty one
/// created in its place (exclusively, never through a link); without, what is there is left
/// for the writer (which may find it held by another process and write beside it). A device
/// or a FIFO is left as it is, to be written through; a link that another user could have
/// made, a folder where another user could swap the file for a link before the writer opens
/// it (writable by others and not sticky, or someone else's), and anything else are
/// refused.
pub fn for_writer(path: &Path, fresh: bool) -> Result<ForWriter, String> {
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let target = match resolve(path)? {
        Resolved::Path(target) => target,
        Resolved::LinkToDevice(link) => return Ok(ForWriter::Through(link)),
    };
    match std::fs::symlink_metadata(&target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(err(e)),
        Ok(meta) if written_through(&meta.file_type()) => return Ok(ForWriter::Through(target)),
        Ok(meta) if meta.is_file() => {}
        Ok(_) => {
            return Err(format!(
                "{}: not a regular file, a device or a FIFO; refused",
                path.display()
            ))
        }
    }
    let folder = target.parent().filter(|p| !p.as_os_str().is_empty());
    let folder = folder.unwrap_or(Path::new("."));
    let dir = std::fs::metadata(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let others_write = dir.mode() & 0o022 != 0 && dir.mode() & 0o1000 == 0;
    if (dir.uid() != euid() && dir.uid() != 0) || others_write {
        return Err(format!(
            "{}: other users may change {} (mode {:04o}, owner {}), and could put a link there before the application opens the trace; refused: name a file in a folder of yours",
            path.display(),
            folder.display(),
            dir.mode() & 0o7777,
            dir.uid()
        ));
    }
    if !fresh {
        return Ok(ForWriter::File(target));
    }
    if std::fs::symlink_metadata(&target).is_ok() {
        std::fs::remove_file(&target).map_err(err)?;
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o666)
        .open(&target)
        .map(|_| ForWriter::File(target.clone()))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => format!(
                "{}: something was put there while it was being replaced; refused",
                path.display()
            ),
            _ => err(e),
        })
}

fn written_through(kind: &std::fs::FileType) -> bool {
    kind.is_char_device() || kind.is_block_device() || kind.is_fifo()
}

/// Where `path` leads.
enum Resolved {
    /// Not a link (or nothing there).
    Path(PathBuf),
    /// A link that may be followed, to a device or a FIFO: written through the link itself
    /// (`/dev/stdout` leads to `/proc/self/fd/1`, whose target names no path).
    LinkToDevice(PathBuf),
}

/// The path written: `path`, or the target of the links it names where they may be
/// followed.
fn resolve(path: &Path) -> Result<Resolved, String> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => meta,
            _ => return Ok(Resolved::Path(at)),
        };
        let folder = at.parent().filter(|p| !p.as_os_str().is_empty());
        let folder = folder.unwrap_or(Path::new("."));
        if !may_follow(&meta, folder) {
            return Err(format!(
                "{}: a symbolic link that another user could have made (it is not yours, or others may write {}); refused: name the file itself",
                path.display(),
                folder.display()
            ));
        }
        if std::fs::metadata(&at).is_ok_and(|m| written_through(&m.file_type())) {
            return Ok(Resolved::LinkToDevice(at));
        }
        let to = std::fs::read_link(&at).map_err(|e| format!("{}: {e}", at.display()))?;
        at = folder.join(to);
    }
    Err(format!(
        "{}: more than {MAX_LINKS} symbolic links; refused",
        path.display()
    ))
}

/// Whether a link (`meta`) in `folder` may be followed: the caller or root owns it (root's
/// `/dev/stdout`), and the folder is the caller's or root's and no one else may write it.
fn may_follow(meta: &std::fs::Metadata, folder: &Path) -> bool {
    let me = euid();
    let Ok(dir) = std::fs::metadata(folder) else {
        return false;
    };
    let trusted = |uid: u32| uid == me || uid == 0;
    trusted(meta.uid()) && trusted(dir.uid()) && dir.mode() & 0o022 == 0
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Writes `bytes` into a new file beside `path` with a name no one can guess (created
/// exclusively, never through a link), then renames it over `path`.
fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.utrace-{:016x}", unguessable()?));
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o666)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
    let done = written.and_then(|()| std::fs::rename(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Writes `bytes` to the device or FIFO at `path`, as it is (never created or truncated);
/// through the link at `path` when `follow` (one that may be followed).
fn write_through(path: &Path, bytes: &[u8], follow: bool) -> std::io::Result<()> {
    let flags = if follow { 0 } else { libc::O_NOFOLLOW };
    let mut f = OpenOptions::new()
        .write(true)
        .custom_flags(flags)
        .open(path)?;
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
