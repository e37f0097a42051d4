//! `utrace capture`: asks a process that loaded the layer to trace its next N frames, and
//! waits for the file to be complete; or stops its capture.

use std::path::{Path, PathBuf};

use crate::control_socket::{ask, connect_error, socket_of};

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
    let request = format!(
        "capture frames={frames} format={format} path={}",
        out.display()
    );
    let (mut started, mut done, mut error) = (false, None, None);
    let result = ask(&path, &request, &mut |line| {
        if line == "started" {
            started = true;
        } else if let Some(counts) = line.strip_prefix("done ") {
            done = Some(counts.to_string());
        } else if let Some(e) = line.strip_prefix("error ") {
            error = Some(e.to_string());
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
    match done {
        Some(done) => {
            // The file goes last (a path may hold spaces): the one asked for, or a
            // pid-named one beside it if another process was writing that one.
            let (counts, written) = match done.split_once(" file=") {
                Some((counts, file)) => (counts, PathBuf::from(file)),
                None => (done.as_str(), out.clone()),
            };
            let field = |k: &str| {
                counts
                    .split_whitespace()
                    .find_map(|f| f.strip_prefix(k)?.strip_prefix('='))
                    .unwrap_or("?")
                    .to_string()
            };
            let stopped = if counts.contains("stopped=1") {
                " (stopped early)"
            } else {
                ""
            };
            println!(
                "captured {} frames, {} batches, {} events ({} dropped) to {}{stopped}",
                field("frames"),
                field("batches"),
                field("events"),
                field("dropped"),
                written.display()
            );
            Ok(())
        }
        None if started => Err(format!(
            "process {pid} exited during the capture; {} holds every batch written until then",
            out.display()
        )),
        None => Err(format!(
            "process {pid} closed the connection without an answer"
        )),
    }
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
    fn an_output_path_with_a_line_break_is_refused_before_anything_is_asked() {
        let e = capture(u32::MAX, 1, "txt", Path::new("nl\nx.txt")).unwrap_err();
        assert!(e.contains("without line breaks"), "{e}");
    }
}
