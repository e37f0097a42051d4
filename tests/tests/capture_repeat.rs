//! Captures in a row to one path (issue 43, defect 6): each finished capture closes its
//! file inside the application, so the next one writes the same path again, and the
//! process's open files stay as many after the hundredth capture as after the first.
//! A FIFO no one reads is refused at once. (Before, each capture left its file open and
//! locked: the second was written pid-named, the third refused, and 30 captures took the
//! process from 15 open files to 46.)

use std::path::Path;
use std::time::Duration;

use utrace_tests::checks::{assert_clean, parse};
use utrace_tests::control_socket::{pid_of, socket, text, utrace};
use utrace_tests::harness::{utrace_exe, TempDir, XServer};
use utrace_tests::workload;

const CAPTURES: usize = 100;

/// Makes the `enough` file when dropped, so that the workload ends even when an assertion
/// fails first.
struct Enough<'a>(&'a Path);

impl Drop for Enough<'_> {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0, b"");
    }
}

fn open_files(pid: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the workload's open files")
        .count()
}

#[test]
fn a_hundred_captures_to_one_path_each_write_it_and_leave_no_file_open() {
    let x = XServer::start();
    let dir = TempDir::new("capture-repeat");
    let enough = dir.path().join("enough");
    let run = std::thread::scope(|scope| {
        let running = scope.spawn(|| {
            workload!("frames")
                .layers(&["VK_LAYER_utrace"])
                .arg("--frames", "1000000")
                .arg("--pace-ms", "5")
                .arg("--frames-until", enough.to_str().unwrap())
                .env("DISPLAY", &x.display)
                .run(&dir)
        });
        let ending = Enough(&enough);
        let socket = socket(&dir, Duration::from_secs(60)).expect("the workload's control socket");
        let pid = pid_of(&socket);
        let file = dir.path().join("same.txt");
        let mut after_first = 0;
        for n in 1..=CAPTURES {
            let out = utrace(
                &dir,
                &[
                    "capture", "--pid", &pid, "--frames", "1", "--out", "same.txt",
                ],
            );
            let said = text(&out.stdout);
            assert!(
                out.status.success(),
                "capture {n}: {said}{}",
                text(&out.stderr)
            );
            assert!(
                said.starts_with("captured 1 frames,")
                    && said.trim_end().ends_with(&*file.to_string_lossy()),
                "capture {n} wrote the path asked: {said}"
            );
            let trace = parse(&std::fs::read_to_string(&file).unwrap());
            assert_eq!(trace.ends.len(), 1, "capture {n}: one whole capture");
            if n == 1 {
                after_first = open_files(&pid);
            }
        }
        // The last capture's writer closes its file on its own thread once its queue is
        // empty: on a loaded machine that may come a little after the command returned.
        let mut after_last = open_files(&pid);
        let since = std::time::Instant::now();
        while after_last > after_first && since.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
            after_last = open_files(&pid);
        }

        // A FIFO that no one reads: refused at once, and the process can be captured again
        // (the layer's control thread waited in its open for good, the capture neither
        // running nor stoppable).
        let fifo = dir.path().join("unread.fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path in the test's folder.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let out = std::process::Command::new("timeout")
            .arg("60")
            .arg(utrace_exe())
            .args(["capture", "--pid", &pid, "--frames", "1", "--out"])
            .arg(&fifo)
            .env("XDG_RUNTIME_DIR", dir.path().join("xdg"))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("no one has open to read"), "{err}");
        let again = utrace(
            &dir,
            &[
                "capture", "--pid", &pid, "--frames", "1", "--out", "same.txt",
            ],
        );
        assert!(again.status.success(), "{}", text(&again.stderr));
        assert_eq!(
            after_last, after_first,
            "open files after the first capture and after the last"
        );
        drop(ending);
        running.join().unwrap()
    });
    assert_clean(&run);
    let siblings = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("same."))
        .count();
    assert_eq!(
        siblings,
        1,
        "no pid-named file beside {}",
        Path::new("same.txt").display()
    );
}
