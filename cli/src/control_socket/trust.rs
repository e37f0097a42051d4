//! Whether a control socket is the layer's, in a process of this user: the rules the layer
//! binds it by, checked from the client's side. The command may run as root where another
//! user can write `XDG_RUNTIME_DIR` (a shared `/tmp`): a socket planted there could read
//! the output path a capture sends and answer what it likes. So the folder must be this
//! user's, open to no one else and not a link; the socket too; and the kernel's word on
//! the connected peer (`SO_PEERCRED`) must name this user and the pid of `<pid>.sock`.
//! Whatever a peer says is escaped before it reaches the terminal.

use std::borrow::Cow;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{Error, ErrorKind};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// Connects to the control socket at `path` (`<folder>/<pid>.sock`) once the folder, the
/// socket and the peer are found to be this user's and that process's. A refusal is an
/// error of kind `PermissionDenied` saying why.
pub fn connect(path: &Path) -> std::io::Result<UnixStream> {
    let own = own_uid();
    let pid = pid_of(path).ok_or_else(|| refused("is not named <pid>.sock".into()))?;
    let folder_path = path.parent().unwrap_or(Path::new("."));
    let folder = checked_folder(folder_path)?;
    let name = path.file_name().unwrap_or_default();
    let c_name = CString::new(name.as_encoded_bytes())
        .map_err(|_| refused("has a NUL in its name".into()))?;
    let stat = stat_at(&folder, &c_name)?;
    if stat.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(refused("is not a socket".into()));
    }
    owned_closed(stat.st_uid, stat.st_mode, own).map_err(refused)?;
    // Through the folder's descriptor: the kernel resolves it to the folder checked above,
    // wherever its path leads by now.
    let through = format!(
        "/proc/self/fd/{}/{}",
        folder.as_raw_fd(),
        name.to_string_lossy()
    );
    let stream = UnixStream::connect(through)?;
    let (peer_pid, peer_uid) = peer(&stream)?;
    if peer_uid != own {
        return Err(refused(format!(
            "is answered by user {peer_uid}, not {own}"
        )));
    }
    if peer_pid != pid as i32 {
        return Err(refused(format!(
            "is answered by process {peer_pid}, not {pid}"
        )));
    }
    Ok(stream)
}

/// `text` with every control character (escape sequences, carriage returns, bells) shown
/// as an escape, so that a peer's words cannot drive the terminal.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// The pid in the name `<pid>.sock`.
pub fn pid_of(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let digits = name.strip_suffix(".sock")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A refusal of the socket itself: "it {why}".
fn refused(why: String) -> Error {
    refused_as("it", why)
}

fn refused_as(what: &str, why: String) -> Error {
    Error::new(
        ErrorKind::PermissionDenied,
        format!("refused: {what} {why}"),
    )
}

/// The sockets' folder, opened without following a link and found to be this user's
/// alone. A refusal is an error of kind `PermissionDenied` saying why.
pub fn checked_folder(path: &Path) -> std::io::Result<File> {
    let shown = path.display().to_string();
    let refused = |why: String| refused_as(&shown, why);
    let folder = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY)
        .open(path)
        .map_err(|e| match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => refused("is a symbolic link".into()),
            Ok(m) if !m.is_dir() => refused("is not a folder".into()),
            _ => e,
        })?;
    let meta = folder.metadata()?;
    owned_closed(meta.uid(), meta.mode(), own_uid()).map_err(refused)?;
    Ok(folder)
}

/// What is wrong with an owner and mode for a file of `own`'s, if anything.
fn owned_closed(uid: u32, mode: u32, own: u32) -> Result<(), String> {
    if uid != own {
        return Err(format!("belongs to user {uid}, not {own}"));
    }
    let mode = mode & 0o7777;
    if mode & 0o077 != 0 {
        return Err(format!("has mode {mode:04o}: other users could reach it"));
    }
    Ok(())
}

/// The socket's own metadata in the opened folder, not following a link.
fn stat_at(folder: &File, name: &CString) -> std::io::Result<libc::stat> {
    // SAFETY: all-zero is a valid `stat`, filled in by the call below.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: an open folder's descriptor, a NUL-terminated name, a `stat` to fill.
    let r = unsafe {
        libc::fstatat(
            folder.as_raw_fd(),
            name.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r == 0 {
        Ok(stat)
    } else {
        Err(Error::last_os_error())
    }
}

/// The pid and user of the process at the other end (the kernel's word).
fn peer(stream: &UnixStream) -> std::io::Result<(i32, u32)> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a connected socket's descriptor, and a `ucred` of the size given.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if r == 0 {
        Ok((cred.pid, cred.uid))
    } else {
        Err(Error::last_os_error())
    }
}

fn own_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
#[path = "trust/tests.rs"]
mod tests;
