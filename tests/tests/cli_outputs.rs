//! Where the command writes the files a user names (`convert -o`, `view -o`), held to the
//! layer's rules since it may run as root beside other users: a device, a FIFO or standard
//! output is written through, never replaced by a file; a temporary name no one can guess;
//! a link only followed when no one else could have made it. A second user (`nobody`,
//! through `setpriv`) plants links in a shared folder that is 0777 and not sticky (Debian's
//! `fs.protected_symlinks` already guards sticky folders such as `/tmp`).

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use utrace_tests::harness::utrace_exe;
use utrace_tests::two_users::{as_nobody_ok, shared_folder, untouched, victim};

/// A trace to read: the command's golden txt trace.
fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/golden/demo.txt")
}

fn utrace(args: &[&str]) -> Output {
    Command::new(utrace_exe())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("utrace runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn devices_and_standard_output_are_written_through_never_replaced() {
    let demo = demo();
    let demo = demo.to_str().unwrap();
    // A full device says so, with status 2, and stays a device.
    let out = utrace(&["convert", demo, "--to", "json", "-o", "/dev/full"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("No space left"),
        "{}",
        text(&out.stderr)
    );
    let full = std::fs::symlink_metadata("/dev/full").unwrap();
    assert!(full.file_type().is_char_device());
    // /dev/stdout (a link to the pipe the test reads) and `-` reach the pipe; the link
    // stays a link.
    for to in ["/dev/stdout", "-"] {
        let out = utrace(&["convert", demo, "--to", "csv", "-o", to]);
        assert!(out.status.success(), "{to}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).starts_with("device,batch,"),
            "{to}: {}",
            text(&out.stdout)
        );
    }
    let stdout = std::fs::symlink_metadata("/dev/stdout").unwrap();
    assert!(
        stdout.file_type().is_symlink(),
        "/dev/stdout is still a link"
    );
    let out = utrace(&["view", demo, "-o", "-"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("<html"), "the page on stdout");
}

#[test]
fn a_second_users_links_in_a_shared_folder_are_never_followed() {
    let (dir, shared) = shared_folder("cli-outputs");
    let victim = victim(&dir);
    let v = victim.to_str().unwrap();
    let at = |name: &str| shared.join(name).to_str().unwrap().to_string();
    // The temporary name the command used to write through, and the output itself.
    as_nobody_ok(&["ln", "-s", v, &at("out.html.utrace-partial")]);
    as_nobody_ok(&["ln", "-s", v, &at("link.html")]);
    let demo = demo();
    let demo = demo.to_str().unwrap();

    let out = utrace(&["view", demo, "-o", &at("out.html")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(untouched(&victim));
    let page = std::fs::symlink_metadata(at("out.html")).unwrap();
    assert!(page.file_type().is_file(), "the page is a file of its own");

    for args in [
        vec!["view", demo, "-o"],
        vec!["convert", demo, "--to", "json", "-o"],
    ] {
        let mut args = args.clone();
        let link = at("link.html");
        args.push(&link);
        let out = utrace(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("symbolic link") && err.contains("refused"),
            "{err}"
        );
        assert!(untouched(&victim));
        let link = std::fs::symlink_metadata(at("link.html")).unwrap();
        assert!(link.file_type().is_symlink(), "the link is left alone");
    }
}
