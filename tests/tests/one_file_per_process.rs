//! One trace file per process (issue 26): processes sharing a `GPU_TRACEFILE` (a launcher
//! and its children, an X server on Zink beside the application it serves) never write
//! into each other's file. The first to trace holds the path; another writes to a pid-named
//! file beside it and says so once; a process that traces nothing leaves the path alone.
//! A `utrace capture` whose output another process is writing goes pid-named too.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use utrace_tests::checks::{assert_clean, assert_trace_matches, parse};
use utrace_tests::harness::{utrace_exe, Run, TempDir, Workload, XServer};
use utrace_tests::trace_txt::Item;
use utrace_tests::{control_socket, perfetto_trace, workload};

const LAYERS: &[&str] = &["VK_LAYER_utrace"];

/// `basic` (4 submissions) writing to `file`, each submission followed by `pace_ms`.
fn basic(file: &Path, pace_ms: u32) -> Workload {
    workload!("basic")
        .layers(LAYERS)
        .arg("--pace-ms", &pace_ms.to_string())
        .env("GPU_TRACEFILE", file.to_str().unwrap())
}

/// The content a test plants at the path before the processes run.
const OLD_TRACE: &str = "an old trace, replaced by the first process";

/// Waits until `file` holds a trace (the first process traced its first batch): something,
/// and not the old content planted there.
fn wait_for_content(file: &Path, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        match std::fs::read(file) {
            Ok(bytes) if !bytes.is_empty() && bytes != OLD_TRACE.as_bytes() => return,
            _ => {}
        }
        assert!(
            Instant::now() < deadline,
            "{} held no trace for {within:?}",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs a slow first process on `file` and, once its trace has begun, a second one to
/// completion; returns both runs and the files beside `file` other than it.
fn two_processes(name: &str, file_name: &str) -> (TempDir, PathBuf, Run, Run, Vec<PathBuf>) {
    let shared = TempDir::new(name);
    let file = shared.path().join(file_name);
    std::fs::write(&file, OLD_TRACE).unwrap();
    let (dir1, dir2) = (TempDir::new("first"), TempDir::new("second"));
    let (first, second) = std::thread::scope(|scope| {
        // 4 submissions 1.5 s apart: alive for seconds after its first batch.
        let first = scope.spawn(|| basic(&file, 1500).run(&dir1));
        wait_for_content(&file, Duration::from_secs(30));
        let second = basic(&file, 0).run(&dir2);
        assert!(
            !first.is_finished(),
            "the first process is still tracing when the second ends"
        );
        (first.join().unwrap(), second)
    });
    let others: Vec<PathBuf> = std::fs::read_dir(shared.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p != &file)
        .collect();
    (shared, file, first, second, others)
}

/// The second process's one message names both paths.
fn assert_said_once(second: &Run, file: &Path, own: &Path) {
    let said: Vec<&str> = second
        .stderr
        .lines()
        .filter(|l| l.contains("being written by another process"))
        .collect();
    assert_eq!(said.len(), 1, "one message: {}", second.stderr);
    assert!(
        said[0].contains(file.to_str().unwrap()) && said[0].contains(own.to_str().unwrap()),
        "it names both files: {}",
        said[0]
    );
}

/// `gl.txt` and `gl.<pid>.txt`.
fn assert_pid_named(others: &[PathBuf], stem: &str, ext: &str) -> PathBuf {
    assert_eq!(others.len(), 1, "one file beside the path: {others:?}");
    let name = others[0].file_name().unwrap().to_str().unwrap();
    let pid = name
        .strip_prefix(&format!("{stem}."))
        .and_then(|n| n.strip_suffix(&format!(".{ext}")))
        .unwrap_or_else(|| panic!("not pid-named: {name}"));
    assert!(pid.parse::<u32>().is_ok(), "{name}");
    others[0].clone()
}

#[test]
fn two_processes_sharing_a_text_file_each_write_a_whole_trace_of_their_own() {
    let (_shared, file, first, second, others) = two_processes("one-file-txt", "gl.txt");
    assert_clean(&first);
    assert_clean(&second);
    let own = assert_pid_named(&others, "gl", "txt");
    for (run, path) in [(&first, &file), (&second, &own)] {
        let text = std::fs::read_to_string(path).unwrap();
        let trace = assert_trace_matches(&text, run);
        assert_eq!(trace.batches.len(), 4, "{}: {text}", path.display());
        assert_eq!(trace.ends.len(), 1, "one END OF TRACE: {text}");
    }
    assert_said_once(&second, &file, &own);
    assert!(
        !first.stderr.contains("being written by another process"),
        "{}",
        first.stderr
    );
}

#[test]
fn two_processes_sharing_a_perfetto_file_each_write_a_whole_trace_of_their_own() {
    let (_shared, file, first, second, others) = two_processes("one-file-pf", "gpu.pftrace");
    assert_clean(&first);
    assert_clean(&second);
    let own = assert_pid_named(&others, "gpu", "pftrace");
    for (run, path) in [(&first, &file), (&second, &own)] {
        let trace = perfetto_trace::read(path);
        let subs = &run.report().devices[0].submissions;
        assert_eq!(trace.submits.len(), subs.len(), "{}", path.display());
        assert_eq!(trace.submits.len(), 4);
        let pids: std::collections::HashSet<i32> =
            trace.submits.iter().map(|s| s.pid as i32).collect();
        assert_eq!(pids.len(), 1, "one process per file: {pids:?}");
    }
    assert_said_once(&second, &file, &own);
}

#[test]
fn two_processes_sharing_a_csv_file_each_write_a_whole_csv_of_their_own() {
    let (_shared, file, first, second, others) = two_processes("one-file-csv", "gl.csv");
    assert_clean(&first);
    assert_clean(&second);
    let own = assert_pid_named(&others, "gl", "csv");
    for (run, path) in [(&first, &file), (&second, &own)] {
        let text = std::fs::read_to_string(path).unwrap();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(
            rows[0],
            "device,batch,frame,submission,thread,submitted,ns,delta,depth,event,args"
        );
        assert_eq!(
            rows.iter().filter(|r| r.starts_with("device,")).count(),
            1,
            "one header: {text}"
        );
        assert_eq!(
            *rows.last().unwrap(),
            "0,,,,,,,,,end_of_trace,\"batches=4, events=24, dropped=0\"",
            "{text}"
        );
        // The command buffers it names are this process's own, every one of them.
        let mut named: Vec<&str> = rows
            .iter()
            .filter(|r| r.contains(",start_cmd_buffer,"))
            .filter_map(|r| r.split("cmd=").nth(1)?.split(['"', ',']).next())
            .collect();
        let mut submitted: Vec<&str> = run.report().devices[0]
            .submissions
            .iter()
            .flat_map(|s| s.cmdbufs.iter().map(String::as_str))
            .collect();
        named.sort();
        submitted.sort();
        assert_eq!(named, submitted, "{}", path.display());
    }
    assert_said_once(&second, &file, &own);
}

/// A file at the path with known content and an old mtime.
fn planted(dir: &TempDir, name: &str) -> (PathBuf, SystemTime) {
    let file = dir.path().join(name);
    std::fs::write(&file, "someone's trace, not to be touched\n").unwrap();
    let old = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old)
        .unwrap();
    (
        file.clone(),
        std::fs::metadata(&file).unwrap().modified().unwrap(),
    )
}

fn assert_left_alone(name: &str) {
    let dir = TempDir::new("one-file-untouched");
    let (file, mtime) = planted(&dir, name);
    // A frame window past the run: devices are created, no batch is ever traced.
    let run = workload!("basic")
        .layers(LAYERS)
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("GPU_TRACE_FRAMES", "100-200")
        .env("UTRACE_LOG", "info")
        .run(&dir);
    assert_clean(&run);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "someone's trace, not to be touched\n"
    );
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), mtime);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(name.split('.').next().unwrap()) && n != name)
        .collect();
    assert!(leftovers.is_empty(), "nothing beside it: {leftovers:?}");
    let said = run
        .stderr
        .lines()
        .filter(|l| l.contains("nothing was traced to") && l.contains(file.to_str().unwrap()))
        .count();
    assert_eq!(said, 1, "said once: {}", run.stderr);
    assert!(run.stdout.is_empty() || parse(&run.stdout).batches.is_empty());
}

#[test]
fn a_process_that_traces_nothing_leaves_a_text_path_alone() {
    assert_left_alone("gl.txt");
}

#[test]
fn a_process_that_traces_nothing_leaves_a_perfetto_path_alone() {
    assert_left_alone("gpu.pftrace");
}

#[test]
fn a_capture_to_a_file_another_process_writes_goes_to_a_pid_named_file() {
    let x = XServer::start();
    let shared = TempDir::new("one-file-capture");
    let file = shared.path().join("out.txt");
    let (dir1, dir2) = (TempDir::new("tracing"), TempDir::new("captured"));
    let (tracing, captured, out) = std::thread::scope(|scope| {
        // Holds out.txt for its whole run (4 submissions 3 s apart).
        let tracing = scope.spawn(|| basic(&file, 3000).run(&dir1));
        wait_for_content(&file, Duration::from_secs(30));
        // Loaded with no tracing variable: idle until captured.
        let captured = scope.spawn(|| {
            workload!("frames")
                .layers(LAYERS)
                .arg("--frames", "300")
                .arg("--pace-ms", "15")
                .env("DISPLAY", &x.display)
                .run(&dir2)
        });
        let socket = control_socket::socket(&dir2, Duration::from_secs(20))
            .expect("the workload's control socket within 20 s");
        let pid = socket.file_stem().unwrap().to_string_lossy().into_owned();
        let out = Command::new(utrace_exe())
            .args(["capture", "--pid", &pid, "--frames", "3", "--out"])
            .arg(&file)
            .env("XDG_RUNTIME_DIR", dir2.path().join("xdg"))
            .output()
            .expect("utrace runs");
        assert!(
            !tracing.is_finished(),
            "the tracing process still holds the file"
        );
        (
            tracing.join().unwrap(),
            captured.join().unwrap(),
            (out, pid),
        )
    });
    let (out, pid) = out;
    assert_clean(&tracing);
    assert_clean(&captured);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let own = shared.path().join(format!("out.{pid}.txt"));
    assert!(
        stdout.starts_with("captured 3 frames,") && stdout.contains(own.to_str().unwrap()),
        "the command names where the capture went: {stdout}"
    );
    // The tracing process's file is its own whole trace; the capture is in its own file.
    let trace = assert_trace_matches(&std::fs::read_to_string(&file).unwrap(), &tracing);
    assert_eq!(trace.batches.len(), 4);
    let capture = parse(&std::fs::read_to_string(&own).unwrap());
    let frames = capture
        .items
        .iter()
        .filter(|i| matches!(i, Item::EndOfFrame(_)))
        .count();
    assert_eq!(frames, 3);
    assert_said_once(&captured, &file, &own);
}
