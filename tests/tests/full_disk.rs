//! A disk that is full for a while: `GPU_TRACEFILE` on a small tmpfs that the test fills,
//! then frees once the trace stops growing. Every record in the file is whole, the batches
//! that could not be written are counted in the end record, and writing resumes when there
//! is room again. (Mounting a tmpfs needs root, as the test suite runs.)

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use utrace_tests::checks::{assert_clean, parse, said};
use utrace_tests::harness::TempDir;
use utrace_tests::workload;

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(path: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(path).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(path)
            .output()
            .expect("mount runs");
        assert!(
            out.status.success(),
            "mounting a tmpfs (the test needs root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(path.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Bytes free on the file system of `path`.
fn free_bytes(path: &Path) -> u64 {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and a zeroed struct for the kernel to fill.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    st.f_bavail as u64 * st.f_frsize as u64
}

/// Fills the file system of `path` up, then frees `room` bytes of it.
fn fill_leaving(path: &Path, room: u64) {
    let mut filler = std::fs::File::create(path).unwrap();
    let block = vec![0x5au8; 4096];
    while filler.write_all(&block).is_ok() {}
    let len = filler.metadata().unwrap().len();
    filler.set_len(len.saturating_sub(room)).unwrap();
}

#[test]
fn a_disk_full_for_a_while_loses_whole_batches_counted_and_writing_resumes() {
    let dir = TempDir::new("full-disk");
    let fs = Tmpfs::mount(&dir.path().join("small"), "1m");
    let filler = fs.0.join("filler");
    fill_leaving(&filler, 16 << 10);
    let file = fs.0.join("trace.txt");
    let (run, freed_at) = std::thread::scope(|scope| {
        let workload = scope.spawn(|| {
            workload!("idle-waits")
                .arg("--pace-ms", "3")
                .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
                .env("GPU_TRACEFILE", file.to_str().unwrap())
                .run(&dir)
        });
        // Once the disk has no page left and the trace stopped growing for a while (the
        // batches submitted every 3 ms meanwhile were lost), free it. A writer that only
        // stalled (a busy machine) is told apart by the room left.
        let (mut size, mut since) = (0, Instant::now());
        let mut freed_at = None;
        while !workload.is_finished() {
            let now = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
            if now != size || free_bytes(&fs.0) > 0 {
                (size, since) = (now, Instant::now());
            } else if size > 0 && since.elapsed() > Duration::from_millis(100) {
                std::fs::remove_file(&filler).unwrap();
                freed_at = Some(size);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        (workload.join().expect("the workload's thread"), freed_at)
    });
    assert_clean(&run);
    let freed_at = freed_at.expect("the disk filled up while the workload ran");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.len() as u64 > freed_at,
        "writing resumed once there was room"
    );
    // Every record is whole: the file parses as a trace.
    let trace = parse(&text);
    let written = trace.batches.len() as u64;
    assert!(0 < written && written < 300, "{written} batches written");
    // The numbering shows where batches are missing, and the end record counts them.
    let numbers: Vec<u64> = trace.batches.iter().map(|b| b.number).collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(*numbers.last().unwrap(), 300, "the last batch is there");
    let end = &trace.ends[0];
    assert_eq!(end.batches, written);
    assert_eq!(end.events, 6 * written);
    assert_eq!(end.dropped, 6 * (300 - written), "every lost batch counted");
    // Said once when it failed, once when it resumed.
    let said = said(&run);
    assert_eq!(said.len(), 2, "{}", run.stderr);
    assert!(said[0].contains("No space left on device"), "{}", said[0]);
    assert!(
        said[1].contains("works again") && said[1].contains(&format!("{} batch", 300 - written)),
        "{}",
        said[1]
    );
}

/// `many-commands` (one batch of 100,000 traced fills, about 20 MB of text, written to a
/// file in parts of 1 MiB as it is formatted) with its trace on a tmpfs of `size`.
fn many_commands_on(size: &str) -> (utrace_tests::harness::Run, String) {
    many_commands_as("txt", size)
}

/// As [`many_commands_on`], in `format`.
fn many_commands_as(format: &str, size: &str) -> (utrace_tests::harness::Run, String) {
    let dir = TempDir::new("large-batch");
    let fs = Tmpfs::mount(&dir.path().join("disk"), size);
    let file = fs.0.join(format!("trace.{format}"));
    let run = workload!("many-commands")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("GPU_TRACE_FORMAT", format)
        .run(&dir);
    assert_clean(&run);
    (run, std::fs::read_to_string(&file).unwrap())
}

#[test]
fn a_batch_written_in_parts_reads_as_one() {
    let (_, text) = many_commands_on("64m");
    let trace = parse(&text);
    let commands = utrace_tests::patterns::many_commands::COMMANDS as usize;
    assert_eq!(trace.batches.len(), 1);
    let batch = &trace.batches[0];
    // The command buffer's range and a range per fill, each line whole.
    assert_eq!(batch.events.len(), 2 + 2 * commands);
    assert!(text.len() > 8 << 20, "many parts: {} bytes", text.len());
    assert_eq!(trace.ends[0].events, (2 + 2 * commands) as u64);
    assert_eq!(trace.ends[0].dropped, 0);
}

#[test]
fn a_batch_that_fills_the_disk_part_way_is_taken_back_whole_and_counted() {
    // Room for a few parts of the batch, not for all of it.
    let (run, text) = many_commands_on("4m");
    let commands = utrace_tests::patterns::many_commands::COMMANDS as u64;
    // What was written of the batch was taken back: only the device's header (written
    // whole before it) and the end record are left.
    let trace = parse(&text);
    assert!(trace.batches.is_empty(), "{} bytes left", text.len());
    assert_eq!(trace.headers.len(), 4, "{text}");
    assert!(text.len() < 2000, "{text}");
    let end = &trace.ends[0];
    assert_eq!((end.batches, end.events), (0, 0));
    assert_eq!(end.dropped, 2 + 2 * commands, "the lost batch is counted");
    let said = said(&run);
    // Said when the part failed, and when the end record found room again.
    assert_eq!(said.len(), 2, "{}", run.stderr);
    assert!(said[0].contains("No space left on device"), "{}", said[0]);
    assert!(said[1].contains("1 batch(es) were lost"), "{}", said[1]);
}

#[test]
fn a_csv_file_keeps_its_header_when_its_first_batch_is_lost() {
    let (_, text) = many_commands_as("csv", "4m");
    let commands = utrace_tests::patterns::many_commands::COMMANDS as u64;
    // The column header went with the device's header row, written whole before the
    // batch; the batch's parts were taken back; the end row counts them.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(
        lines[0],
        "device,batch,frame,submission,thread,submitted,ns,delta,depth,event,args"
    );
    assert!(lines[1].starts_with("0,,,,,,,,,trace,\"utrace="), "{text}");
    assert_eq!(
        lines[2],
        format!(
            "0,,,,,,,,,end_of_trace,\"batches=0, events=0, dropped={}\"",
            2 + 2 * commands
        )
    );
}

#[test]
fn a_disk_that_stays_full_still_gets_its_tally_said() {
    let dir = TempDir::new("full-disk-end");
    let fs = Tmpfs::mount(&dir.path().join("small"), "1m");
    fill_leaving(&fs.0.join("filler"), 0);
    let file = fs.0.join("trace.txt");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "", "nothing fits");
    let said = said(&run);
    assert_eq!(said.len(), 2, "{}", run.stderr);
    assert!(said[0].contains("No space left on device"), "{}", said[0]);
    // What the END OF TRACE line would have said, on stderr instead.
    let tally = said[1]
        .split_once("it reads: ")
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("{}", said[1]));
    let end = &parse(&format!("{tally}\n")).ends[0];
    assert_eq!((end.batches, end.events), (0, 0), "{tally}");
    assert!(end.dropped > 0, "{tally}");
}

/// A Perfetto trace that fills the disk: the layer writes the session's ring into the file
/// itself, so the file keeps whole packets only (it decodes, every stage in it resolving),
/// and what could not be written is counted and said.
#[test]
fn a_perfetto_trace_that_fills_the_disk_stays_whole_and_says_what_it_lost() {
    let dir = TempDir::new("full-disk-perfetto");
    // `many-commands` writes about 10 MB of stages.
    let fs = Tmpfs::mount(&dir.path().join("disk"), "2m");
    let file = fs.0.join("trace.pftrace");
    let run = workload!("many-commands")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("GPU_TRACE_FORMAT", "perfetto")
        .run(&dir);
    assert_clean(&run);
    let trace = utrace_tests::perfetto_trace::read(&file);
    let commands = utrace_tests::patterns::many_commands::COMMANDS as usize;
    assert!(
        !trace.stages.is_empty() && trace.stages.len() < commands,
        "{} stages in the file",
        trace.stages.len()
    );
    let said = said(&run);
    assert!(
        said.iter()
            .any(|l| l.contains("No space left on device") && l.contains("trace.pftrace")),
        "{}",
        run.stderr
    );
    assert!(
        said.iter()
            .any(|l| l.contains("bytes of the Perfetto trace could not be written")),
        "{}",
        run.stderr
    );
}

/// A Perfetto trace whose disk is full from the start for a while, then frees up: writing
/// resumes, said once each way, and the stages written after the failure are placed: the
/// devices intern their stages, queues and clock afresh (the lost packets held them).
#[test]
fn a_perfetto_trace_whose_disk_frees_up_places_its_later_stages_again() {
    let dir = TempDir::new("full-disk-perfetto-frees");
    let fs = Tmpfs::mount(&dir.path().join("small"), "1m");
    let filler = fs.0.join("filler");
    fill_leaving(&filler, 0);
    let file = fs.0.join("trace.pftrace");
    let (run, freed_at) = std::thread::scope(|scope| {
        let workload = scope.spawn(|| {
            workload!("idle-waits")
                .arg("--pace-ms", "3")
                .layers(&["VK_LAYER_utrace"])
                .env("GPU_TRACEFILE", file.to_str().unwrap())
                .run(&dir)
        });
        // A few of the layer's writes fail, then the disk is freed: 400 ms once the layer
        // opened the file (a slow start-up is not counted), four of its 100 ms drains,
        // with submissions every 3 ms.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !file.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(400));
        std::fs::remove_file(&filler).unwrap();
        let freed_at = utrace_tests::vk::boottime_ns();
        (workload.join().expect("the workload's thread"), freed_at)
    });
    assert_clean(&run);
    let said = said(&run);
    assert!(
        said.iter().any(|l| l.contains("No space left on device")),
        "{}",
        run.stderr
    );
    assert!(
        said.iter().any(|l| l.contains("works again")),
        "{}",
        run.stderr
    );
    // What follows the loss is placed once its sequence started afresh (at its next
    // slice, not at the session's next periodic clear, up to a second later): all but
    // the few submissions written while the failing read went on.
    let trace = utrace_tests::perfetto_trace::read_wrapped(&file);
    let placed: std::collections::BTreeSet<u32> =
        trace.stages.iter().map(|s| s.submission).collect();
    println!(
        "{} submissions placed of {}, {} stages skipped",
        placed.len(),
        trace.submits.len(),
        trace.skipped
    );
    // Every submission made 300 ms after the disk was freed (three of the layer's 100 ms
    // drains: its clock, which a busy machine delays by a time slice, not by three) is
    // placed.
    let later: Vec<u32> = trace
        .submits
        .iter()
        .filter(|s| s.boot_ns > freed_at + 300_000_000)
        .map(|s| s.submission)
        .collect();
    assert!(
        !later.is_empty(),
        "the run went on after the disk was freed"
    );
    let unplaced: Vec<&u32> = later.iter().filter(|s| !placed.contains(s)).collect();
    assert!(
        unplaced.is_empty(),
        "{} of {} later submissions not placed ({} stages skipped): {unplaced:?}",
        unplaced.len(),
        later.len(),
        trace.skipped
    );
}
