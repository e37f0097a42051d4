//! The files the command has another process write, or removes (`run --out`, `capture
//! --out`, `uninstall`), held to the rules of every output it writes (issue 43): as root
//! beside a second user (`nobody`, through `setpriv`) who plants links in a shared folder
//! that is 0777 and not sticky. A device at the output is written through, never removed
//! (`utrace run --out /dev/null` removed the device); a link the other user planted, or a
//! folder where they could swap the file for one, is refused before the application runs;
//! `uninstall` removes only files. And a user who is not root may still name `/dev/stdout`
//! (root's link).

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};

use utrace_tests::harness::{lavapipe_command, utrace_exe, TempDir};
use utrace_tests::two_users::{as_nobody, as_nobody_ok, shared_folder, untouched, victim};

const WORKLOAD: &str = env!("CARGO_BIN_EXE_utrace-workload");

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A character device like /dev/null, made at `path`.
fn null_device(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path in the test's folder; mknod only makes the node.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    assert_eq!(made, 0, "mknod {}", path.display());
}

fn is_device(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

fn run(dir: &TempDir, out: &Path) -> Output {
    lavapipe_command(dir, &utrace_exe())
        .args(["run", "--out"])
        .arg(out)
        .args(["--", WORKLOAD, "--scenario", "basic"])
        .output()
        .expect("utrace runs")
}

#[test]
fn run_writes_through_a_device_and_refuses_what_another_user_could_swap() {
    let (dir, shared) = shared_folder("cli-writers-run");
    let device = dir.path().join("null");
    null_device(&device);
    let out = run(&dir, &device);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(is_device(&device), "the device is still a device");
    assert!(
        text(&out.stderr).contains("which is not a file: no report"),
        "{}",
        text(&out.stderr)
    );

    let victim = victim(&dir);
    let link = shared.join("t.txt");
    as_nobody_ok(&["ln", "-s", victim.to_str().unwrap(), link.to_str().unwrap()]);
    // The planted link, and a new name in the shared folder (which nobody could swap for a
    // link before the application opens it): refused, the application not run.
    for out_path in [&link, &shared.join("new.txt")] {
        let out = run(&dir, out_path);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", out_path.display());
        assert!(err.contains("refused"), "{err}");
        assert!(!err.contains("utrace-workload: basic"), "not run: {err}");
    }
    assert!(untouched(&victim));
    assert!(!shared.join("new.txt").exists());
}

#[test]
fn capture_refuses_another_users_link_before_asking_the_process() {
    let (dir, shared) = shared_folder("cli-writers-capture");
    let victim = victim(&dir);
    let link = shared.join("c.txt");
    as_nobody_ok(&["ln", "-s", victim.to_str().unwrap(), link.to_str().unwrap()]);
    let capture = |out: &Path| {
        Command::new(utrace_exe())
            .args(["capture", "--pid", "1", "--frames", "1", "--out"])
            .arg(out)
            .env("XDG_RUNTIME_DIR", dir.path())
            .output()
            .unwrap()
    };
    let out = capture(&link);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("symbolic link") && err.contains("refused"),
        "{err}"
    );
    // A file nobody made, open to all, in /tmp (sticky): the capture would go to them.
    let theirs = std::env::temp_dir().join(format!("utrace-theirs-{}", std::process::id()));
    let made = format!("umask 0; : > '{}'", theirs.display());
    as_nobody_ok(&["sh", "-c", &made]);
    let out = capture(&theirs);
    let _ = std::fs::remove_file(&theirs);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("user 65534's") && err.contains("refused"),
        "{err}"
    );
}

#[test]
fn uninstall_removes_files_only() {
    let dir = TempDir::new("cli-writers-uninstall");
    let layers = dir.path().join("vulkan/explicit_layer.d");
    std::fs::create_dir_all(&layers).unwrap();
    let manifest = layers.join("VkLayer_utrace.json");
    null_device(&manifest);
    let out = Command::new(utrace_exe())
        .arg("uninstall")
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a file install makes; left alone"),
        "{err}"
    );
    assert!(is_device(&manifest), "the device is left alone");
}

#[test]
fn a_user_who_is_not_root_may_name_dev_stdout() {
    let (dir, _) = shared_folder("cli-writers-stdout");
    // A copy of the command and the trace that `nobody` can reach.
    let exe = dir.path().join("utrace");
    std::fs::copy(utrace_exe(), &exe).unwrap();
    let demo = dir.path().join("demo.txt");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/golden/demo.txt"),
        &demo,
    )
    .unwrap();
    for f in [&exe, &demo] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // Through a pipe of nobody's own, as a user's shell makes one (`... | less`).
    let script = format!(
        "'{}' convert '{}' --to csv -o /dev/stdout | cat",
        exe.display(),
        demo.display()
    );
    let out = as_nobody(&["/bin/sh", "-c", &script]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("device,batch,"));
}

/// A trial as nobody found these after the first fixes (session 25): a link as a folder of
/// the path, a link chain ending at a FIFO, nobody's own FIFO, `%p` in `run --out`.
#[test]
fn links_anywhere_in_the_path_and_another_users_fifo_are_refused() {
    let (dir, shared) = shared_folder("cli-writers-walk");
    // Root's folder, and nobody's link to it in the shared folder.
    let root_dir = dir.path().join("root-only");
    std::fs::create_dir(&root_dir).unwrap();
    let evil = shared.join("evil");
    as_nobody_ok(&[
        "ln",
        "-s",
        root_dir.to_str().unwrap(),
        evil.to_str().unwrap(),
    ]);
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/golden/demo.txt");
    let convert = |out: &Path| {
        Command::new(utrace_exe())
            .args(["convert"])
            .arg(&demo)
            .args(["--to", "csv", "-o"])
            .arg(out)
            .output()
            .unwrap()
    };
    let refused = |out: &Output, what: &str| {
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains("refused"), "{what}: {err}");
    };
    refused(
        &convert(&evil.join("x.csv")),
        "convert through nobody's link",
    );
    refused(&run(&dir, &evil.join("t.txt")), "run through nobody's link");
    assert_eq!(
        std::fs::read_dir(&root_dir).unwrap().count(),
        0,
        "nothing written there"
    );

    // Root's own link to nobody's link to root's FIFO: refused at nobody's link.
    let fifo = root_dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path in the test's folder.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let hop = shared.join("hop");
    as_nobody_ok(&["ln", "-s", fifo.to_str().unwrap(), hop.to_str().unwrap()]);
    let mine = dir.path().join("mine");
    std::os::unix::fs::symlink(&hop, &mine).unwrap();
    refused(&convert(&mine), "a chain through nobody's link to a FIFO");

    // Nobody's own FIFO in the shared folder: whoever reads it would get the trace.
    let theirs = shared.join("theirs");
    as_nobody_ok(&["mkfifo", theirs.to_str().unwrap()]);
    let out = convert(&theirs);
    refused(&out, "nobody's FIFO");
    assert!(
        text(&out.stderr).contains("user 65534's"),
        "{}",
        text(&out.stderr)
    );
    refused(&run(&dir, &theirs), "run into nobody's FIFO");
}

#[test]
fn run_writes_the_name_asked_even_with_percent_signs() {
    // The layer expands %p: the command checked and made the literal name, so that is the
    // one the layer must write (it wrote a name nobody could have planted a link at).
    let dir = TempDir::new("cli-writers-percent");
    let out_path = dir.path().join("t-%p.txt");
    let out = run(&dir, &out_path);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        std::fs::read_to_string(&out_path).is_ok_and(|t| t.contains("END OF TRACE")),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("cmd_buffer"), "the report");
}

#[test]
fn dev_stdout_appends_where_standard_output_goes_and_reports_escape_the_trace() {
    let dir = TempDir::new("cli-writers-append");
    let log = dir.path().join("log.txt");
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/golden/demo.txt");
    let script = format!(
        "echo HEADER > '{log}'; '{exe}' convert '{demo}' --to csv -o /dev/stdout >> '{log}'",
        log = log.display(),
        exe = utrace_exe().display(),
        demo = demo.display()
    );
    let out = Command::new("/bin/sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.starts_with("HEADER\ndevice,batch,"), "{written}");

    // A label that would drive the terminal is shown escaped by report.
    let trace = dir.path().join("esc.txt");
    let demo_text = std::fs::read_to_string(&demo).unwrap();
    let (head, rest) = demo_text
        .split_once("label=\"")
        .expect("a label in the demo");
    std::fs::write(&trace, format!("{head}label=\"\u{1b}]0;pwned\u{7}{rest}")).unwrap();
    let out = Command::new(utrace_exe())
        .args(["report", "--by", "label"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        !report.contains('\u{1b}') && !report.contains('\u{7}'),
        "{report}"
    );
    assert!(report.contains("\\u{1b}]0;pwned"), "{report}");
}
