//! `utrace capture` and `utrace list`: the client of the layer's control socket
//! (`$XDG_RUNTIME_DIR/utrace/<pid>.sock`; the protocol is described in the layer's
//! `control` module and the README): one line sent per connection, reply lines read until
//! the layer closes it.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// The folder of the control sockets.
fn folder() -> Option<PathBuf> {
    std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| PathBuf::from(d).join("utrace"))
}

fn socket_of(pid: u32) -> Result<PathBuf, String> {
    let folder = folder().ok_or("XDG_RUNTIME_DIR is not set: no process can be reached")?;
    Ok(folder.join(format!("{pid}.sock")))
}

/// Sends `line` to the socket at `path`; `on_line` is given each reply line.
fn ask(path: &Path, line: &str, on_line: &mut dyn FnMut(&str)) -> std::io::Result<()> {
    let mut stream = UnixStream::connect(path)?;
    // The layer may answer (and close) before reading, as it does a refused peer: its
    // reply still counts when the request could not be written whole.
    let written = stream.write_all(format!("{line}\n").as_bytes());
    let mut replied = false;
    for reply in BufReader::new(stream).lines() {
        match reply {
            Ok(reply) => {
                replied = true;
                on_line(&reply);
            }
            Err(e) if replied => return Err(e),
            Err(_) => break,
        }
    }
    if replied {
        Ok(())
    } else {
        written
    }
}

fn connect_error(pid: u32, path: &Path, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "process {pid} offers no control socket ({} is missing: is the layer loaded, XDG_RUNTIME_DIR the same, control not switched off?)",
            path.display()
        ),
        std::io::ErrorKind::ConnectionRefused => {
            format!("process {pid} does not answer on {} (it exited?)", path.display())
        }
        _ => format!("{}: {e}", path.display()),
    }
}

/// `utrace capture --pid PID --frames N`: waits for the capture's end.
pub fn capture(pid: u32, frames: u32, format: &str, out: &Path) -> Result<(), String> {
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
        Some(counts) => {
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
                out.display()
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
pub fn stop(pid: u32) -> Result<(), String> {
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

/// `utrace list`: every process whose socket answers.
pub fn list() -> Result<(), String> {
    let Some(folder) = folder() else {
        println!("no process can be captured (XDG_RUNTIME_DIR is not set)");
        return Ok(());
    };
    let mut sockets: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    sockets.retain(|p| p.extension().is_some_and(|e| e == "sock"));
    sockets.sort();
    let mut any = false;
    for path in sockets {
        let mut reply = None;
        let asked = ask(&path, "status", &mut |l| reply = Some(l.to_string()));
        match (asked, reply) {
            (Ok(()), Some(line)) if line.starts_with("ok ") => {
                let field = |k: &str| {
                    line.split_whitespace()
                        .find_map(|f| f.strip_prefix(k)?.strip_prefix('='))
                        .unwrap_or("?")
                        .to_string()
                };
                let capturing = if field("capturing") == "1" {
                    "yes"
                } else {
                    "no"
                };
                println!(
                    "{:>8}  {:<20}  devices={}  capturing={capturing}",
                    field("pid"),
                    field("name"),
                    field("devices")
                );
                any = true;
            }
            (_, Some(line)) => println!("{}: {line}", path.display()),
            _ => println!("{}: stale (nobody answers)", path.display()),
        }
    }
    if !any {
        println!("no process can be captured");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    /// A one-connection fake layer answering `lines` and closing.
    fn serve(path: &Path, lines: &'static [&'static str]) -> std::thread::JoinHandle<String> {
        let listener = UnixListener::bind(path).unwrap();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut request = String::new();
            BufReader::new(stream.try_clone().unwrap())
                .read_line(&mut request)
                .unwrap();
            let mut stream = stream;
            for l in lines {
                stream.write_all(format!("{l}\n").as_bytes()).unwrap();
            }
            request
        })
    }

    #[test]
    fn replies_are_read_to_their_end() {
        let dir = std::env::temp_dir().join(format!("utrace-client-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("1.sock");
        let server = serve(
            &path,
            &["started", "done frames=5 batches=7 events=42 dropped=0"],
        );
        let mut lines = Vec::new();
        ask(&path, "capture frames=5 format=txt path=/x", &mut |l| {
            lines.push(l.to_string())
        })
        .unwrap();
        assert_eq!(
            server.join().unwrap(),
            "capture frames=5 format=txt path=/x\n"
        );
        assert_eq!(
            lines,
            ["started", "done frames=5 batches=7 events=42 dropped=0"]
        );
        let missing = connect_error(
            9,
            &dir.join("9.sock"),
            &UnixStream::connect(dir.join("9.sock")).unwrap_err(),
        );
        assert!(missing.contains("offers no control socket"), "{missing}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
