use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};
use std::path::PathBuf;

use super::write_whole;

/// A fresh folder of mode `mode`, removed at the end.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str, mode: u32) -> Folder {
        let n = super::unguessable().unwrap();
        let path = std::env::temp_dir().join(format!("utrace-write-whole-{name}-{n:016x}"));
        std::fs::create_dir(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        Folder(path)
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_new_file_and_a_regular_file_are_written_whole_and_nothing_else_is_left() {
    let dir = Folder::new("regular", 0o700);
    let out = dir.0.join("out.txt");
    write_whole(&out, b"first").unwrap();
    write_whole(&out, b"second").unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), b"second");
    assert_eq!(dir.names(), ["out.txt"], "no temporary file left");
}

#[test]
fn a_link_at_the_old_predictable_temporary_name_is_never_followed() {
    let dir = Folder::new("planted", 0o700);
    let victim = dir.0.join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    symlink(&victim, dir.0.join("out.html.utrace-partial")).unwrap();
    write_whole(&dir.0.join("out.html"), b"page").unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert_eq!(std::fs::read(dir.0.join("out.html")).unwrap(), b"page");
}

#[test]
fn devices_are_written_through_and_never_replaced() {
    write_whole(std::path::Path::new("/dev/null"), b"gone").unwrap();
    let full = write_whole(std::path::Path::new("/dev/full"), b"x").unwrap_err();
    assert!(
        full.contains("/dev/full") && full.contains("No space left"),
        "{full}"
    );
    for dev in ["/dev/null", "/dev/full"] {
        let kind = std::fs::symlink_metadata(dev).unwrap().file_type();
        assert!(kind.is_char_device(), "{dev} is still a device");
    }
}

#[test]
fn a_fifo_is_written_through() {
    let dir = Folder::new("fifo", 0o700);
    let fifo = dir.0.join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    write_whole(&fifo, b"through").unwrap();
    assert_eq!(reader.join().unwrap(), b"through");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_link_is_followed_only_when_no_one_else_could_have_made_it() {
    // The caller's link in the caller's private folder: its target is written.
    let dir = Folder::new("own-link", 0o700);
    let target = dir.0.join("target.txt");
    symlink("target.txt", dir.0.join("link.txt")).unwrap();
    write_whole(&dir.0.join("link.txt"), b"via the link").unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"via the link");
    let link = std::fs::symlink_metadata(dir.0.join("link.txt")).unwrap();
    assert!(link.file_type().is_symlink(), "the link stays");

    // The same link in a folder others may write: refused, the target untouched.
    let shared = Folder::new("shared-link", 0o777);
    let victim = dir.0.join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    symlink(&victim, shared.0.join("out.txt")).unwrap();
    let e = write_whole(&shared.0.join("out.txt"), b"page").unwrap_err();
    assert!(e.contains("symbolic link") && e.contains("refused"), "{e}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
}

#[test]
fn a_folder_is_refused() {
    let dir = Folder::new("folder", 0o700);
    let e = write_whole(&dir.0, b"x").unwrap_err();
    assert!(e.contains("refused"), "{e}");
}
