//! A path the user named, walked one component at a time from `/` through folder
//! descriptors, never following a link the rules do not allow, wherever it is in the path
//! (a link another user made in a shared folder, as a folder of the path, led the command
//! into root's folders). What the walk ends at is then written through the last folder's
//! descriptor, so nothing swapped behind it is reached.

use std::collections::VecDeque;
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{Error, ErrorKind};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

/// Links followed at most, one after the other.
const MAX_LINKS: usize = 40;

/// What the path's last component is.
#[derive(Debug, PartialEq, Eq)]
pub enum Leaf {
    Missing,
    Regular {
        uid: u32,
    },
    /// A device or a FIFO (to be written through), owned by the caller or root.
    Through,
}

/// Where a path leads.
pub struct Walked {
    /// The folder holding the last component, opened (`O_PATH`) once every component on
    /// the way was checked.
    pub folder: File,
    /// That folder's path, with no link in it.
    pub folder_path: PathBuf,
    pub name: OsString,
    pub leaf: Leaf,
    /// Why another user could change a folder on the way (rename a folder of the path, or
    /// put a link in place of the name), if one could: a path handed to another process
    /// to open by name is then not safe.
    pub swappable: Option<String>,
}

impl Walked {
    /// The last component's path, with no link in it.
    pub fn path(&self) -> PathBuf {
        self.folder_path.join(&self.name)
    }
}

/// This process's effective user and group.
pub fn ids() -> (u32, u32) {
    // SAFETY: geteuid and getegid have no preconditions and cannot fail.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

/// Whether only the caller (or root) may change the entries of a folder of `meta`: its
/// owner is one of them, and others may not write it, or it is sticky (`/tmp`: only an
/// entry's owner may rename it), or only the caller's own group may.
pub fn folder_closed(meta: &libc::stat) -> bool {
    closed(meta.st_uid, meta.st_gid, meta.st_mode)
}

/// [`folder_closed`] of a folder's owner, group and mode.
pub fn closed(uid: u32, gid: u32, mode: u32) -> bool {
    let (me, my_group) = ids();
    let owner = uid == me || uid == 0;
    let others = mode & 0o002 != 0;
    let group = mode & 0o020 != 0 && gid != my_group;
    let sticky = mode & 0o1000 != 0;
    owner && (sticky || (!others && !group))
}

/// Walks `path` (made absolute from the working folder). A link is followed only when the
/// caller or root owns it and its folder is closed to others ([`folder_closed`]); a device
/// or a FIFO is taken only when the caller or root owns it. Refusals and errors are one
/// line naming the path.
pub fn walk(path: &Path) -> Result<Walked, String> {
    let shown = path.display();
    let absolute = std::env::current_dir()
        .map(|d| d.join(path))
        .map_err(|e| format!("{shown}: {e}"))?;
    let mut queue: VecDeque<OsString> = components(&absolute);
    if queue.is_empty() {
        return Err(format!("{shown}: names no file"));
    }
    // The folders entered, from `/`: each with its path.
    let root = open_at(None, OsStr::new("/")).map_err(|e| format!("/: {e}"))?;
    let mut stack: Vec<(File, PathBuf)> = vec![(root, "/".into())];
    let mut swappable = None;
    let mut links = 0;
    while let Some(part) = queue.pop_front() {
        let last = queue.is_empty();
        if part == "." {
            continue;
        }
        if part == ".." {
            if stack.len() > 1 {
                stack.pop();
            }
            continue;
        }
        let (dir, dir_path) = stack.last().expect("/ stays");
        let dir_stat = fstat(dir).map_err(|e| format!("{}: {e}", dir_path.display()))?;
        let closed = folder_closed(&dir_stat);
        if !closed && swappable.is_none() {
            swappable = Some(format!(
                "other users may change {} (mode {:04o}, owner {})",
                dir_path.display(),
                dir_stat.st_mode & 0o7777,
                dir_stat.st_uid
            ));
        }
        let at = dir_path.join(&part);
        let stat = match stat_at(dir, &part) {
            Ok(stat) => Some(stat),
            Err(e) if e.kind() == ErrorKind::NotFound && last => None,
            Err(e) if at.as_path() == absolute.as_path() => return Err(format!("{shown}: {e}")),
            Err(e) => return Err(format!("{shown}: {e} ({})", at.display())),
        };
        let kind = stat.map(|s| s.st_mode & libc::S_IFMT);
        if kind == Some(libc::S_IFLNK) {
            let stat = stat.expect("a link");
            links += 1;
            let (me, _) = ids();
            let owned = stat.st_uid == me || stat.st_uid == 0;
            if links > MAX_LINKS {
                return Err(format!(
                    "{shown}: more than {MAX_LINKS} symbolic links; refused"
                ));
            }
            if !owned || !closed {
                return Err(format!(
                    "{shown}: {} is a symbolic link that another user could have made (it is not yours, or others may write {}); refused: name the file itself",
                    at.display(),
                    dir_path.display()
                ));
            }
            let target = read_link_at(dir, &part).map_err(|e| format!("{}: {e}", at.display()))?;
            let target = PathBuf::from(target);
            if target.is_absolute() {
                stack.truncate(1);
            }
            for (i, c) in components(&target).into_iter().enumerate() {
                queue.insert(i, c);
            }
            continue;
        }
        if !last {
            if kind != Some(libc::S_IFDIR) {
                return Err(format!("{}: not a folder", at.display()));
            }
            let sub = open_at(Some(dir), &part).map_err(|e| format!("{}: {e}", at.display()))?;
            stack.push((sub, at));
            continue;
        }
        let (me, _) = ids();
        let leaf = match (kind, stat) {
            (None, _) => Leaf::Missing,
            (Some(libc::S_IFREG), Some(s)) => Leaf::Regular { uid: s.st_uid },
            (Some(libc::S_IFCHR | libc::S_IFBLK | libc::S_IFIFO), Some(s)) => {
                if s.st_uid != me && s.st_uid != 0 {
                    return Err(format!(
                        "{shown}: a device or FIFO of user {}'s, who would read what is written to it; refused",
                        s.st_uid
                    ));
                }
                Leaf::Through
            }
            _ => {
                return Err(format!(
                    "{shown}: not a regular file, a device or a FIFO; refused"
                ))
            }
        };
        let (folder, folder_path) = stack.pop().expect("/ stays");
        return Ok(Walked {
            folder,
            folder_path,
            name: part,
            leaf,
            swappable,
        });
    }
    Err(format!("{shown}: names no file"))
}

/// The normal components of `path` (`/` dropped; `.` and `..` kept for the walk).
fn components(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            Component::CurDir => Some(".".into()),
            Component::RootDir | Component::Prefix(_) => None,
        })
        .collect()
}

fn c_name(name: &OsStr) -> std::io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| Error::new(ErrorKind::InvalidInput, "a NUL in the name"))
}

/// A folder opened by `O_PATH`, never through a link: `name` in `dir` (or an absolute path).
fn open_at(dir: Option<&File>, name: &OsStr) -> std::io::Result<File> {
    let c = c_name(name)?;
    let base = dir.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated name and a folder descriptor that `dir` keeps open.
    let fd = unsafe { libc::openat(base, c.as_ptr(), flags) };
    if fd < 0 {
        return Err(Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

fn fstat(file: &File) -> std::io::Result<libc::stat> {
    // SAFETY: all-zero is a valid `stat`, filled in by the call.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: an open descriptor and a `stat` to fill.
    if unsafe { libc::fstat(file.as_raw_fd(), &mut stat) } != 0 {
        return Err(Error::last_os_error());
    }
    Ok(stat)
}

/// `name` in `dir`, not following a link.
pub fn stat_at(dir: &File, name: &OsStr) -> std::io::Result<libc::stat> {
    let c = c_name(name)?;
    // SAFETY: all-zero is a valid `stat`, filled in by the call.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    let flags = libc::AT_SYMLINK_NOFOLLOW | libc::AT_EMPTY_PATH;
    // SAFETY: an open folder descriptor, a NUL-terminated name, a `stat` to fill.
    if unsafe { libc::fstatat(dir.as_raw_fd(), c.as_ptr(), &mut stat, flags) } != 0 {
        return Err(Error::last_os_error());
    }
    Ok(stat)
}

fn read_link_at(dir: &File, name: &OsStr) -> std::io::Result<OsString> {
    let c = c_name(name)?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: an open folder descriptor, a NUL-terminated name, and a buffer of its length.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            c.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(OsString::from_vec(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(uid: u32, gid: u32, mode: u32) -> libc::stat {
        // SAFETY: all-zero is a valid `stat`.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        (stat.st_uid, stat.st_gid, stat.st_mode) = (uid, gid, libc::S_IFDIR | mode);
        stat
    }

    #[test]
    fn a_folder_is_closed_when_only_the_caller_or_root_may_change_it() {
        let (me, group) = ids();
        let other = me.wrapping_add(4242);
        assert!(folder_closed(&folder(me, group, 0o755)));
        assert!(folder_closed(&folder(0, 0, 0o755)));
        assert!(folder_closed(&folder(0, 0, 0o1777)), "sticky, as /tmp");
        // The caller's own group (a user-private group, umask 002).
        assert!(folder_closed(&folder(me, group, 0o775)));
        assert!(!folder_closed(&folder(me, group.wrapping_add(1), 0o775)));
        assert!(!folder_closed(&folder(me, group, 0o777)));
        assert!(!folder_closed(&folder(other, group, 0o755)));
    }
}
