//! The client's checks, as this user: a socket it may trust connects; anything another
//! user could have made or reached is refused, saying why. (Another user's folder and
//! socket, planted as `nobody`, are in `tests/tests/cli_socket_trust.rs`.)

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use super::super::tests::Private;
use super::*;

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn refusal(path: &Path) -> String {
    match connect(path) {
        Ok(_) => panic!("{} connected", path.display()),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
            e.to_string()
        }
    }
}

#[test]
fn this_users_socket_of_this_pid_in_a_private_folder_connects() {
    let dir = Private::new("trusted");
    let (path, _listener) = dir.bind();
    assert!(connect(&path).is_ok());
}

#[test]
fn a_folder_or_socket_others_could_reach_is_refused() {
    let dir = Private::new("open");
    let (path, _listener) = dir.bind();
    set_mode(&dir.0, 0o755);
    let e = refusal(&path);
    assert!(
        e.contains("has mode 0755: other users could reach it"),
        "{e}"
    );
    assert!(
        e.contains(&dir.0.display().to_string()),
        "names the folder: {e}"
    );
    set_mode(&dir.0, 0o700);
    set_mode(&path, 0o666);
    let e = refusal(&path);
    assert_eq!(e, "refused: it has mode 0666: other users could reach it");
}

#[test]
fn a_folder_reached_through_a_link_is_refused() {
    let dir = Private::new("link");
    let real = dir.0.join("real");
    std::fs::create_dir(&real).unwrap();
    set_mode(&real, 0o700);
    let path = real.join(format!("{}.sock", std::process::id()));
    let _listener = UnixListener::bind(&path).unwrap();
    set_mode(&path, 0o600);
    let link = dir.0.join("utrace");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let e = refusal(&link.join(path.file_name().unwrap()));
    assert!(e.ends_with("utrace is a symbolic link"), "{e}");
}

#[test]
fn a_socket_answered_by_another_process_than_its_name_is_refused() {
    // Bound by this process under another pid's name: the kernel says who answers.
    let dir = Private::new("pid");
    let path = dir.0.join("1.sock");
    let _listener = UnixListener::bind(&path).unwrap();
    set_mode(&path, 0o600);
    let e = refusal(&path);
    assert_eq!(
        e,
        format!(
            "refused: it is answered by process {}, not 1",
            std::process::id()
        )
    );
}

#[test]
fn names_and_files_that_are_not_sockets_are_refused() {
    let dir = Private::new("names");
    let file = dir.0.join(format!("{}.sock", std::process::id()));
    std::fs::write(&file, "x").unwrap();
    set_mode(&file, 0o600);
    assert_eq!(refusal(&file), "refused: it is not a socket");
    let odd: PathBuf = dir.0.join("x.sock");
    assert_eq!(refusal(&odd), "refused: it is not named <pid>.sock");
    assert_eq!(pid_of(Path::new("/r/utrace/42.sock")), Some(42));
    for name in ["/r/+42.sock", "/r/.sock", "/r/42.socket", "/r/4 2.sock"] {
        assert_eq!(pid_of(Path::new(name)), None, "{name}");
    }
}

#[test]
fn control_characters_are_shown_escaped() {
    assert!(matches!(
        printable("ok pid=1 name=vkcube"),
        Cow::Borrowed(_)
    ));
    assert_eq!(
        printable("\u{1b}]0;title\u{7}\u{1b}[31mred\r\n\u{9b}"),
        "\\u{1b}]0;title\\u{7}\\u{1b}[31mred\\r\\n\\u{9b}"
    );
}
