//! `utrace capture`: asks a process that loaded the layer to trace its next N frames, and
//! waits for the file to be complete; or stops its capture.

use std::path::{Path, PathBuf};

use crate::control_socket::{ask, connect_error, socket_of};
use crate::write_whole::{for_writer, ForWriter};

/// `utrace capture`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The process.
    #[arg(long)]
    pid: u32,
    /// How many frames, from the end of the current one.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..), required_unless_present = "stop", conflicts_with = "stop")]
    frames: Option<u32>,
    /// The file to write, opened by the process itself [default: utrace-PID-capture.EXT
    /// here].
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
    /// The capture's format [default: from --out's extension (.json, .jsonl, .csv), else
    /// txt].
    #[arg(long, value_parser = ["txt", "json", "csv"])]
    format: Option<String>,
    /// Ends the process's capture in progress.
    #[arg(long)]
    stop: bool,
}

pub fn run(args: Args) -> Result<(), String> {
    let Args {
        pid,
        frames,
        out,
        format,
        stop,
    } = args;
    if stop {
        return self::stop(pid);
    }
    let format = match format {
        Some(format) => format,
        None => format_of(out.as_deref())?,
    };
    let out = out.unwrap_or_else(|| PathBuf::from(format!("utrace-{pid}-capture.{format}")));
    capture(pid, frames.unwrap_or(1), &format, &out)
}

/// The format `--out`'s name asks for, as `GPU_TRACEFILE`'s does; a Perfetto name is
/// refused (a capture writes text formats only).
fn format_of(out: Option<&Path>) -> Result<String, String> {
    let extension = out
        .and_then(|p| p.extension())
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    Ok(match extension.as_deref() {
        Some("json" | "jsonl") => "json",
        Some("csv") => "csv",
        Some("pftrace" | "perfetto-trace") => {
            return Err(
                "a capture writes txt, json or csv; for Perfetto, run the application with GPU_TRACEFILE=NAME.pftrace (or record with traced)".into(),
            )
        }
        _ => "txt",
    }
    .to_string())
}

/// `utrace capture --pid PID --frames N`: waits for the capture's end.
fn capture(pid: u32, frames: u32, format: &str, out: &Path) -> Result<(), String> {
    // The request is one line: a path that breaks it would name another file.
    if out.to_str().is_none_or(|p| p.contains(['\n', '\r'])) {
        return Err(format!(
            "--out {:?}: the path must be UTF-8 text without line breaks",
            out.display()
        ));
    }
    let path = socket_of(pid)?;
    let out = std::env::current_dir()
        .map(|d| d.join(out))
        .unwrap_or_else(|_| out.to_path_buf());
    // The application opens it: by the rules of every output the command writes, a link or
    // a folder another user could use is refused here (what is there is left for the layer,
    // which writes beside a file another process holds).
    let out = match for_writer(&out, false)? {
        ForWriter::File(out) | ForWriter::Through(out) => out,
    };
    let request = format!(
        "capture frames={frames} format={format} path={}",
        out.display()
    );
    let (mut started, mut last, mut error) = (false, None, None);
    let result = ask(&path, &request, &mut |line| {
        if line == "started" {
            started = true;
        } else if let Some(e) = line.strip_prefix("error ") {
            error = Some(e.to_string());
        } else if let Some(end) = Ending::parse(line) {
            last = Some(end);
        }
    });
    if let Err(e) = result {
        if !started {
            return Err(connect_error(pid, &path, &e));
        }
    }
    if let Some(e) = error {
        return Err(format!("process {pid}: {e}"));
    }
    match last {
        Some(end) => end.say(pid, frames, &out),
        None if started => Err(format!(
            "process {pid} exited during the capture, without a word (killed?); {} holds {}",
            out.display(),
            frames_held(&out)
        )),
        None => Err(format!(
            "process {pid} closed the connection without an answer"
        )),
    }
}

/// A capture's last line: `done` (every frame asked was written) or `ended` (cut short).
struct Ending {
    done: bool,
    counts: String,
    /// The file written: the one asked for, or a pid-named one beside it if another
    /// process was writing that one.
    file: Option<PathBuf>,
}

impl Ending {
    fn parse(line: &str) -> Option<Ending> {
        let (done, rest) = match line.split_once(' ')? {
            ("done", rest) => (true, rest),
            ("ended", rest) => (false, rest),
            _ => return None,
        };
        // The file goes last (a path may hold spaces).
        let (counts, file) = match rest.split_once(" file=") {
            Some((counts, file)) => (counts, Some(PathBuf::from(file))),
            None => (rest, None),
        };
        Some(Ending {
            done,
            counts: counts.to_string(),
            file,
        })
    }

    fn field(&self, key: &str) -> String {
        self.counts
            .split_whitespace()
            .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or("?")
            .to_string()
    }

    /// Says what the capture holds: `Ok` when it is what was asked (every frame, or ended
    /// by `--stop`), an error when the process cut it short.
    fn say(&self, pid: u32, asked: u32, out: &Path) -> Result<(), String> {
        let written = self.file.as_deref().unwrap_or(out).display();
        let counts = format!(
            "{} batches, {} events ({} dropped)",
            self.field("batches"),
            self.field("events"),
            self.field("dropped")
        );
        let frames = self.field("frames");
        // Layers before `ended` said `done ... stopped=1` for every early end.
        let stopped = self.field("stopped") == "1";
        if self.field("batches") == "0" && self.field("dropped") != "0" {
            // Everything traced was lost (a full disk, a device that takes nothing).
            return Err(format!(
                "process {pid} could write nothing of the capture to {written}: {counts}"
            ));
        }
        if self.done && !stopped {
            println!("captured {frames} frames, {counts} to {written}");
            Ok(())
        } else if stopped {
            println!("captured {frames} of {asked} frames, {counts} to {written} (stopped early)");
            Ok(())
        } else {
            Err(format!(
                "process {pid} ended its devices or exited during the capture: {written} holds {frames} of the {asked} frames asked, {counts}"
            ))
        }
    }
}

/// What a capture's file holds, for a process that could not say: its frames, as far as it
/// can be read.
fn frames_held(out: &Path) -> String {
    match read_regular(out).and_then(|bytes| crate::trace::parse(&bytes, out)) {
        Ok(trace) => {
            let mut frames: Vec<u64> = trace.batches.iter().map(|b| b.frame).collect();
            frames.dedup();
            format!(
                "{} batches of {} frames, as far as it could be read",
                trace.batches.len(),
                frames.len()
            )
        }
        Err(e) => format!("what was written ({e})"),
    }
}

/// The bytes of `path` if it is a regular file, opened without following a link and
/// without waiting on a FIFO: the process was asked to write it, but the path lives where
/// other users may have put something else since (a link, a FIFO, a device), and this
/// command may run as root.
fn read_regular(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let is_file = file.metadata().is_ok_and(|m| m.is_file());
    if !is_file {
        return Err(format!("{}: not a regular file; not read", path.display()));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes)
}

/// `utrace capture --pid PID --stop`.
fn stop(pid: u32) -> Result<(), String> {
    let path = socket_of(pid)?;
    let mut replies = Vec::new();
    ask(&path, "stop", &mut |l| replies.push(l.to_string()))
        .map_err(|e| connect_error(pid, &path, &e))?;
    match replies.first().map(String::as_str) {
        Some("ok stopped") => {
            println!("process {pid}: the capture was stopped");
            Ok(())
        }
        Some(l) => Err(format!(
            "process {pid}: {}",
            l.strip_prefix("error ").unwrap_or(l)
        )),
        None => Err(format!("process {pid} gave no answer")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_follows_the_output_name_unless_given() {
        let of = |name: &str| format_of(Some(Path::new(name)));
        assert_eq!(of("a.json").unwrap(), "json");
        assert_eq!(of("a.JSONL").unwrap(), "json");
        assert_eq!(of("a.csv").unwrap(), "csv");
        assert_eq!(of("a.txt").unwrap(), "txt");
        assert_eq!(of("a").unwrap(), "txt");
        assert_eq!(format_of(None).unwrap(), "txt");
        assert!(of("a.pftrace").unwrap_err().contains("GPU_TRACEFILE"));
    }

    #[test]
    fn a_capture_cut_short_is_an_error_unless_stopped() {
        let out = Path::new("/x/cut.txt");
        let said = |line: &str| Ending::parse(line).unwrap().say(7, 10, out);
        assert!(said("done frames=10 batches=3 events=9 dropped=0 file=/x/a b.txt").is_ok());
        assert!(
            said("ended frames=4 batches=3 events=9 dropped=0 asked=10 stopped=1 file=/x/c")
                .is_ok()
        );
        // Older layers said `done ... stopped=1` for every early end.
        assert!(said("done frames=4 batches=3 events=9 dropped=0 stopped=1").is_ok());
        let e = said("ended frames=4 batches=3 events=9 dropped=0 asked=10 file=/x/a b.txt")
            .unwrap_err();
        assert!(
            e.contains("/x/a b.txt holds 4 of the 10 frames asked"),
            "{e}"
        );
        assert!(Ending::parse("started").is_none());
        assert!(Ending::parse("second ms=1").is_none());
        // Everything lost (a device that takes nothing): not a success.
        let e = said("done frames=3 batches=0 events=0 dropped=18 file=/x/full").unwrap_err();
        assert!(
            e.contains("could write nothing of the capture to /x/full"),
            "{e}"
        );
    }

    #[test]
    fn what_a_killed_process_left_is_read_only_from_a_regular_file() {
        let dir = std::env::temp_dir().join(format!("utrace-held-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("cut.txt");
        std::fs::write(
            &trace,
            "BATCH 1: device=0 queue=0x1 frame=0 submission=1 cmdbufs=1 queries=0\n",
        )
        .unwrap();
        // A link planted where the trace was asked, a FIFO (which would block a reader) and
        // a device: none is followed, waited on or read.
        let link = dir.join("link.txt");
        std::os::unix::fs::symlink(&trace, &link).unwrap();
        let fifo = dir.join("fifo.txt");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for odd in [&link, &fifo, Path::new("/dev/zero")] {
            let said = frames_held(odd);
            assert!(
                said.contains("not a regular file")
                    || said.contains("symbolic link")
                    || said.contains("Too many levels"),
                "{}: {said}",
                odd.display()
            );
        }
        assert!(read_regular(&trace).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_output_path_with_a_line_break_is_refused_before_anything_is_asked() {
        let e = capture(u32::MAX, 1, "txt", Path::new("nl\nx.txt")).unwrap_err();
        assert!(e.contains("without line breaks"), "{e}");
    }
}
