//! The control socket's folder, `$XDG_RUNTIME_DIR/utrace`, and the socket bound in it.
//!
//! Where `XDG_RUNTIME_DIR` is shared (`/tmp`), another user may have put something at
//! `utrace` first: a symbolic link to a folder of ours, a folder of theirs, a folder open to
//! others. So the folder is created 0700 in one step (never chmod-ed afterwards), opened
//! without following links and checked through that handle, and the socket is bound,
//! renamed into place and removed through the handle too (`/proc/self/fd/N/...`,
//! `renameat`, `unlinkat`): renaming or replacing the path after the check cannot redirect
//! it.

use std::ffi::CString;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use super::peer;

/// The socket, bound in a folder checked to be this user's alone.
pub struct Bound {
    /// The folder, held open for the process's life: the socket is removed through it.
    folder: File,
    name: CString,
    /// `$XDG_RUNTIME_DIR/utrace/<pid>.sock`, for messages.
    pub shown: PathBuf,
}

/// Creates (or finds) `runtime/utrace`, checks it and binds `<pid>.sock` in it, 0600.
/// An error names the path and says what is wrong with it.
pub fn bind(runtime: &Path) -> Result<(UnixListener, Bound), String> {
    let path = runtime.join("utrace");
    let folder = open_checked(runtime, &path)?;
    let name = format!("{}.sock", std::process::id());
    let shown = path.join(&name);
    // Bound and made 0600 under a name no client looks for, then renamed into place: a
    // client that finds `<pid>.sock` the moment it appears can connect (between a bind and
    // its listen a connection is refused).
    let hidden = format!(".{}.sock.new", std::process::id());
    let name = CString::new(name).map_err(|e| format!("{}: {e}", shown.display()))?;
    let hidden = CString::new(hidden).map_err(|e| format!("{}: {e}", shown.display()))?;
    // Sockets left by an earlier process of this pid (it died without removing them).
    unlink(&folder, &name);
    unlink(&folder, &hidden);
    // The folder's descriptor, not its path: the kernel resolves /proc/self/fd/N to the
    // folder opened and checked above, wherever the path now leads.
    let through_fd = format!(
        "/proc/self/fd/{}/{}",
        folder.as_raw_fd(),
        hidden.to_string_lossy()
    );
    let listener = UnixListener::bind(&through_fd)
        .map_err(|e| format!("{}: {e} (bound through {through_fd})", shown.display()))?;
    // Only this user (or root) can replace a name in the checked 0700 folder, so this path
    // cannot be swapped by anyone the mode is meant to keep out.
    if let Err(e) = std::fs::set_permissions(&through_fd, PermissionsExt::from_mode(0o600)) {
        unlink(&folder, &hidden);
        return Err(format!("{}: cannot make it 0600 ({e})", shown.display()));
    }
    // SAFETY: the open folder's descriptor twice and two NUL-terminated names in it.
    let renamed = unsafe {
        libc::renameat(
            folder.as_raw_fd(),
            hidden.as_ptr(),
            folder.as_raw_fd(),
            name.as_ptr(),
        )
    };
    if renamed != 0 {
        let e = std::io::Error::last_os_error();
        unlink(&folder, &hidden);
        return Err(format!("{}: cannot put it in place ({e})", shown.display()));
    }
    Ok((
        listener,
        Bound {
            folder,
            name,
            shown,
        },
    ))
}

impl Bound {
    /// Removes the socket from the folder it was bound in (at exit).
    pub fn remove(&self) {
        unlink(&self.folder, &self.name);
    }
}

fn unlink(folder: &File, name: &CString) {
    // SAFETY: an open folder's descriptor and a NUL-terminated name; failure (nothing
    // there) is harmless.
    unsafe { libc::unlinkat(folder.as_raw_fd(), name.as_ptr(), 0) };
}

/// `path` (= `runtime/utrace`) made 0700 if missing, opened without following a link, and
/// checked through the handle: a folder of this user's with no group or other bits.
fn open_checked(runtime: &Path, path: &Path) -> Result<File, String> {
    let shown = path.display();
    // The base directory specification allows absolute paths only; a relative one would put
    // the socket under whatever folder the process runs in, where no client looks.
    if !runtime.is_absolute() {
        return Err(format!(
            "XDG_RUNTIME_DIR {} is not an absolute path",
            runtime.display()
        ));
    }
    // Only the last component is ours to make: the runtime folder is the session's.
    match DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(format!(
                "XDG_RUNTIME_DIR {} does not exist",
                runtime.display()
            ))
        }
        Err(e) => return Err(format!("{shown}: cannot create it ({e})")),
    }
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY)
        .open(path);
    let folder = match opened {
        Ok(folder) => folder,
        // Said from what is there: the error of a link (ELOOP or ENOTDIR) names no reason.
        Err(e) => {
            return Err(match std::fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_symlink() => format!("{shown} is a symbolic link"),
                Ok(m) if !m.is_dir() => format!("{shown} is not a folder"),
                _ => format!("{shown}: cannot open it ({e})"),
            })
        }
    };
    let meta = folder
        .metadata()
        .map_err(|e| format!("{shown}: cannot inspect it ({e})"))?;
    check(&meta, peer::own_uid()).map_err(|why| format!("{shown} {why}"))?;
    Ok(folder)
}

/// What is wrong with the opened folder's metadata, if anything.
fn check(meta: &std::fs::Metadata, own_uid: u32) -> Result<(), String> {
    if !meta.is_dir() {
        return Err("is not a folder".into());
    }
    if meta.uid() != own_uid {
        return Err(format!("belongs to user {}, not {own_uid}", meta.uid()));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "has mode {mode:04o}: group or other users could reach it (it must be 0700)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh runtime folder for one test, removed at the end.
    struct Runtime(PathBuf);

    impl Runtime {
        fn new(name: &str) -> Runtime {
            let dir =
                std::env::temp_dir().join(format!("utrace-folder-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Runtime(dir)
        }
    }

    impl Drop for Runtime {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
    }

    fn refused(runtime: &Path) -> String {
        match bind(runtime) {
            Ok((_, bound)) => panic!("bound {}", bound.shown.display()),
            Err(e) => e,
        }
    }

    #[test]
    fn a_fresh_folder_is_made_0700_and_the_socket_0600() {
        let rt = Runtime::new("fresh");
        let (_listener, bound) = bind(&rt.0).unwrap();
        assert_eq!(mode(&rt.0.join("utrace")), 0o700);
        assert_eq!(mode(&bound.shown), 0o600);
        assert!(std::os::unix::net::UnixStream::connect(&bound.shown).is_ok());
        bound.remove();
        assert!(!bound.shown.exists());
        // Found again as it was left: still accepted.
        let (_listener, bound) = bind(&rt.0).unwrap();
        bound.remove();
    }

    #[test]
    fn the_socket_is_seen_only_once_it_accepts_connections() {
        // A client that finds `<pid>.sock` the moment it appears (as `utrace top` and the
        // tests do) must be able to connect: the name may not exist between the socket's
        // bind and its listen, nor before it is 0600.
        let rt = Runtime::new("seen");
        let folder = rt.0.join("utrace");
        let name = folder.join(format!("{}.sock", std::process::id()));
        for _ in 0..300 {
            let stop = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|scope| {
                let watcher = scope.spawn(|| loop {
                    if let Ok(meta) = std::fs::symlink_metadata(&name) {
                        let connected = std::os::unix::net::UnixStream::connect(&name);
                        return Some((meta.mode() & 0o777, connected.err()));
                    }
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return None;
                    }
                });
                let (listener, bound) = bind(&rt.0).unwrap();
                // The watcher sees the name (or gives up once it is certainly there).
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                let seen = watcher.join().unwrap();
                drop(listener);
                bound.remove();
                if let Some((mode, error)) = seen {
                    assert_eq!(mode, 0o600, "seen before it was 0600");
                    assert!(error.is_none(), "seen before it listened: {error:?}");
                }
            });
        }
    }

    #[test]
    fn a_missing_runtime_folder_is_not_created() {
        let rt = Runtime::new("missing");
        let gone = rt.0.join("not-there");
        let e = refused(&gone);
        assert!(e.contains("does not exist"), "{e}");
        assert!(!gone.exists());
    }

    #[test]
    fn a_relative_runtime_folder_is_refused() {
        let e = refused(Path::new("relative-runtime"));
        assert!(e.contains("is not an absolute path"), "{e}");
        assert!(!Path::new("relative-runtime").exists());
    }

    #[test]
    fn a_symbolic_link_is_refused_and_its_target_untouched() {
        let rt = Runtime::new("link");
        let victim = rt.0.join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::set_permissions(&victim, PermissionsExt::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(&victim, rt.0.join("utrace")).unwrap();
        let e = refused(&rt.0);
        assert!(e.ends_with("utrace is a symbolic link"), "{e}");
        assert_eq!(mode(&victim), 0o755);
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
    }

    #[test]
    fn something_not_a_folder_is_refused() {
        let rt = Runtime::new("file");
        std::fs::write(rt.0.join("utrace"), "x").unwrap();
        let e = refused(&rt.0);
        assert!(e.ends_with("utrace is not a folder"), "{e}");
    }

    #[test]
    fn an_open_folder_is_refused_and_left_as_it_is() {
        let rt = Runtime::new("open");
        let folder = rt.0.join("utrace");
        for open in [0o755, 0o710, 0o701] {
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::set_permissions(&folder, PermissionsExt::from_mode(open)).unwrap();
            let e = refused(&rt.0);
            assert!(
                e.contains(&format!("has mode {open:04o}: group or other users")),
                "{e}"
            );
            assert_eq!(mode(&folder), open);
            assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
        }
    }

    #[test]
    fn a_folder_of_another_user_is_refused() {
        let rt = Runtime::new("other");
        let folder = rt.0.join("utrace");
        std::fs::create_dir(&folder).unwrap();
        std::fs::set_permissions(&folder, PermissionsExt::from_mode(0o700)).unwrap();
        let meta = std::fs::metadata(&folder).unwrap();
        // Checked on the metadata itself, so that this runs as any user.
        let e = check(&meta, meta.uid() + 1).unwrap_err();
        assert_eq!(
            e,
            format!("belongs to user {}, not {}", meta.uid(), meta.uid() + 1)
        );
    }
}
