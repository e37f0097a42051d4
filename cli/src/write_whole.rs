//! Writes a file a user named (`convert`, `view`, `install`): whole, and by the rules the
//! layer's own outputs follow, since the command may run as root beside other users.
//!
//! - `-`: standard output.
//! - Nothing there, or a regular file: written into a new file of an unpredictable name in
//!   the same folder (created exclusively, so nothing planted there is followed), then
//!   renamed over the path, so that nothing ever reads half of it (a loader a half-copied
//!   library, a user a torn trace) and a failed write leaves what was there before.
//! - A device or a FIFO: written through, never replaced (`/dev/null`, a pipe; `/dev/full`
//!   reports that it is full).
//! - A symbolic link: followed only when the caller owns it and no one else can write the
//!   folder it is in (then its target follows these rules); otherwise refused, since
//!   another user could have put it there.
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

/// Whether a link (`meta`) in `folder` may be followed: the caller owns it, and the folder
/// is the caller's or root's and no one else may write it.
fn may_follow(meta: &std::fs::Metadata, folder: &Path) -> bool {
    let me = euid();
    let Ok(dir) = std::fs::metadata(folder) else {
        return false;
    };
    meta.uid() == me && (dir.uid() == me || dir.uid() == 0) && dir.mode() & 0o022 == 0
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
