//! `utrace top --pid P`: a live view of a running process through its control socket (the
//! layer's `watch`: it traces while watched, and the watch ends when the connection
//! closes). On a terminal, a screen redrawn each second until `q` or Ctrl-C; otherwise one
//! line a second.

mod screen;
mod summary;
mod terminal;

use std::io::{IsTerminal, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

use crate::control_socket::{ask, connect, connect_error, printable, socket_of};
use screen::Watched;
use summary::{History, Second};

/// `utrace top`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The process.
    #[arg(long)]
    pid: u32,
    /// Leaves after this many seconds [default: on `q`, Ctrl-C, or when the process exits].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    seconds: Option<u64>,
}

/// How the watch ended.
enum End {
    /// `q`, Ctrl-C, `SIGTERM` or `SIGHUP` on a terminal, or `--seconds` reached.
    Left,
    /// The process's connection closed (it exited), or its devices went.
    Gone,
    /// `utrace capture --stop` ended it.
    Stopped,
}

pub fn run(args: Args) -> Result<(), String> {
    let pid = args.pid;
    let path = socket_of(pid)?;
    let mut name = String::from("?");
    ask(&path, "status", &mut |l| {
        if let Some(n) = l.split(' ').find_map(|f| f.strip_prefix("name=")) {
            name = n.to_string();
        }
    })
    .map_err(|e| connect_error(pid, &path, &e))?;
    let mut stream = connect(&path).map_err(|e| connect_error(pid, &path, &e))?;
    stream
        .write_all(b"watch\n")
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = Lines::default();
    match lines.next(&mut stream)? {
        Some(l) if l == "started" => {}
        Some(l) => {
            let why = l.strip_prefix("error ").unwrap_or(&l);
            return Err(format!("process {pid} cannot be watched: {why}"));
        }
        None => return Err(format!("process {pid} closed the connection (it exited?)")),
    }
    let who = Watched { pid, name };
    let interactive = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let end = if interactive {
        let raw = terminal::Raw::enter().map_err(|e| format!("the terminal: {e}"))?;
        let end = watch_on_screen(&raw, &who, &mut stream, &mut lines, args.seconds);
        drop(raw);
        end?
    } else {
        watch_as_lines(&mut stream, &mut lines, args.seconds)?
    };
    // Closing the connection ends the watch: the process traces nothing more.
    let _ = stream.shutdown(std::net::Shutdown::Both);
    match end {
        End::Left => {}
        End::Gone => eprintln!("utrace top: process {pid} exited"),
        End::Stopped => eprintln!("utrace top: the watch was stopped (utrace capture --stop)"),
    }
    Ok(())
}

/// What a line of the layer says.
enum Said {
    Second(Second),
    End(End),
}

fn said(line: &str) -> Result<Said, String> {
    Ok(match line {
        "done stopped=1" => Said::End(End::Stopped),
        l if l.starts_with("done") => Said::End(End::Gone),
        l => Said::Second(Second::parse(l)?),
    })
}

fn watch_on_screen(
    raw: &terminal::Raw,
    who: &Watched,
    stream: &mut UnixStream,
    lines: &mut Lines,
    seconds: Option<u64>,
) -> Result<End, String> {
    let (mut history, mut last, mut count) = (History::default(), None, 0);
    loop {
        let width = terminal::Raw::size().0;
        raw.draw(&screen::screen(who, count, last.as_ref(), &history, width));
        if seconds.is_some_and(|s| count >= s) {
            return Ok(End::Left);
        }
        let ready = terminal::wait(true, stream.as_raw_fd()).map_err(|e| e.to_string())?;
        if ready.leave {
            return Ok(End::Left);
        }
        if ready.keys {
            let mut keys = [0u8; 32];
            let n = std::io::stdin().read(&mut keys).unwrap_or(0);
            // q, Q, or Ctrl-C (a byte in raw mode).
            if keys[..n].iter().any(|k| matches!(k, b'q' | b'Q' | 3)) {
                return Ok(End::Left);
            }
        }
        if ready.socket {
            if !lines.fill(stream)? {
                return Ok(End::Gone);
            }
            while let Some(line) = lines.take() {
                match said(&line)? {
                    Said::End(end) => return Ok(end),
                    Said::Second(second) => {
                        history.push(&second);
                        last = Some(second);
                        count += 1;
                    }
                }
            }
        }
    }
}

fn watch_as_lines(
    stream: &mut UnixStream,
    lines: &mut Lines,
    seconds: Option<u64>,
) -> Result<End, String> {
    let (mut history, mut count) = (History::default(), 0);
    let mut out = std::io::stdout();
    while seconds.is_none_or(|s| count < s) {
        let Some(line) = lines.next(stream)? else {
            return Ok(End::Gone);
        };
        match said(&line)? {
            Said::End(end) => return Ok(end),
            Said::Second(second) => {
                history.push(&second);
                count += 1;
                let written = writeln!(out, "{}", screen::log_line(count, &second, &history))
                    .and_then(|()| out.flush());
                // The reader went (a closed pipe): leaving is all there is to do.
                if written.is_err() {
                    return Ok(End::Left);
                }
            }
        }
    }
    Ok(End::Left)
}

/// The layer's lines, split from what the socket gave so far.
#[derive(Default)]
struct Lines {
    buffer: Vec<u8>,
}

impl Lines {
    /// A whole line received, if there is one.
    fn take(&mut self) -> Option<String> {
        let end = self.buffer.iter().position(|&b| b == b'\n')?;
        let line: Vec<u8> = self.buffer.drain(..=end).collect();
        Some(printable(&String::from_utf8_lossy(&line[..end])).into_owned())
    }

    /// Reads what the socket has (once); false when it closed.
    fn fill(&mut self, stream: &mut UnixStream) -> Result<bool, String> {
        let mut chunk = [0u8; 4096];
        loop {
            match stream.read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.buffer.extend_from_slice(&chunk[..n]);
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // A reset is the process going.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Ok(false),
                Err(e) => return Err(format!("the control socket: {e}")),
            }
        }
    }

    /// The next line, waiting for it; None when the socket closed first.
    fn next(&mut self, stream: &mut UnixStream) -> Result<Option<String>, String> {
        loop {
            if let Some(line) = self.take() {
                return Ok(Some(line));
            }
            if !self.fill(stream)? {
                return Ok(None);
            }
        }
    }
}
