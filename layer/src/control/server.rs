//! The control socket's listener and connections (see the module `control`).

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};
use std::time::Duration;

use super::folder::{self, Bound};
use super::request::{self, Request, MAX_LINE};
use super::{capture, peer, watch};

/// The socket, once it exists (removed at exit).
static SOCKET: OnceLock<Bound> = OnceLock::new();
/// How many devices are traced (for `status`), given by whoever started the socket.
static TRACED_DEVICES: OnceLock<fn() -> usize> = OnceLock::new();

/// Starts listening, once per process, unless there is no `XDG_RUNTIME_DIR` or the socket
/// cannot be made safely (`folder::bind` says why, once; tracing goes on without it). `traced_devices` counts the
/// traced devices for `status`.
pub fn start(traced_devices: fn() -> usize) {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let _ = TRACED_DEVICES.set(traced_devices);
        let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) else {
            log::info!(
                "no XDG_RUNTIME_DIR: no control socket (utrace capture cannot reach this process)"
            );
            return;
        };
        match folder::bind(Path::new(&runtime)) {
            Ok((listener, bound)) => {
                log::info!("control socket {}", bound.shown.display());
                let _ = SOCKET.set(bound);
                let spawned = std::thread::Builder::new()
                    .name("utrace-control".into())
                    .spawn(move || serve(listener));
                if let Err(e) = spawned {
                    log::warn!("the control socket's thread could not start ({e})");
                    remove_socket();
                }
            }
            Err(e) => {
                log::warn!("no control socket ({e}); utrace capture cannot reach this process")
            }
        }
    });
}

/// Removes the socket (at exit); later connections find nothing.
pub fn remove_socket() {
    if let Some(bound) = SOCKET.get() {
        bound.remove();
    }
}

/// Connections served at once: a capture's lasts as long as the capture, so room is left
/// for a `stop`, a `status` and a `utrace list` beside it. More get a one-line
/// `error the layer is busy ...` and are closed, with no thread.
const MAX_CONNECTIONS: usize = 4;
/// Connections being served.
static SERVING: AtomicUsize = AtomicUsize::new(0);

/// Gives back a connection's place when its thread ends (or could not start).
struct Place;

impl Drop for Place {
    fn drop(&mut self) {
        SERVING.fetch_sub(1, Ordering::AcqRel);
    }
}

fn serve(listener: UnixListener) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        if SERVING.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            SERVING.fetch_sub(1, Ordering::AcqRel);
            // A fresh connection's buffer takes one line without blocking; the timeout
            // only guards this thread against the unexpected.
            let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
            reply(
                &mut stream,
                &format!("error the layer is busy: {MAX_CONNECTIONS} control connections are open already; try again"),
            );
            continue;
        }
        let place = Place;
        // A capture's connection lasts as long as the capture: each has a thread.
        let _ = std::thread::Builder::new()
            .name("utrace-control".into())
            .spawn(move || {
                let _place = place;
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(stream)));
            });
    }
}

/// The whole request must come within this long of the connection: a peer that sends it a
/// byte at a time would otherwise hold one of the few places indefinitely.
const REQUEST_TIME: Duration = Duration::from_secs(5);

/// Reads the request line (up to a newline, or `MAX_LINE + 1` bytes) into `line`, within
/// [`REQUEST_TIME`] in all.
fn read_request(stream: &UnixStream, line: &mut Vec<u8>) -> std::io::Result<()> {
    let deadline = std::time::Instant::now() + REQUEST_TIME;
    let mut byte = [0u8; 256];
    let mut reader = stream;
    while !line.contains(&b'\n') && line.len() <= MAX_LINE {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        let n = reader.read(&mut byte)?;
        if n == 0 {
            break;
        }
        line.extend_from_slice(&byte[..n]);
    }
    // Nothing after the first line is part of the request.
    if let Some(end) = line.iter().position(|&b| b == b'\n') {
        line.truncate(end + 1);
    }
    Ok(())
}

fn reply(stream: &mut UnixStream, line: &str) {
    let _ = stream.write_all(format!("{line}\n").as_bytes());
}

fn handle(mut stream: UnixStream) {
    // The request is read first, even from a peer about to be refused: a socket closed with
    // unread input resets the connection, and the peer would not see why.
    let mut line = Vec::new();
    let read = read_request(&stream, &mut line);
    match peer::uid(&stream) {
        Ok(uid) if uid == peer::own_uid() => {}
        Ok(uid) => {
            log::warn!("control socket: a process of uid {uid} was refused");
            return reply(
                &mut stream,
                &format!(
                    "error refused: this process belongs to uid {}, the request came from uid {uid}",
                    peer::own_uid()
                ),
            );
        }
        Err(e) => {
            return reply(
                &mut stream,
                &format!("error refused: the peer is unknown ({e})"),
            )
        }
    }
    if let Err(e) = &read {
        if matches!(
            e.kind(),
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
        ) {
            return reply(
                &mut stream,
                &format!(
                    "error no whole request line came within {} s",
                    REQUEST_TIME.as_secs()
                ),
            );
        }
    }
    if read.is_err() || line.len() > MAX_LINE {
        return reply(
            &mut stream,
            "error a request is one line of at most 4096 bytes",
        );
    }
    let Ok(text) = std::str::from_utf8(&line) else {
        return reply(&mut stream, "error a request is UTF-8 text");
    };
    match request::parse(text) {
        Err(e) => reply(&mut stream, &format!("error {e}")),
        Ok(Request::Status) => {
            let name = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
            reply(
                &mut stream,
                &format!(
                    "ok pid={} name={} devices={} capturing={} batches={}",
                    std::process::id(),
                    name.trim(),
                    TRACED_DEVICES.get().map_or(0, |count| count()),
                    u8::from(capture::capturing()),
                    crate::sink::remote_slot::traced_batches()
                ),
            )
        }
        Ok(Request::Stop) => {
            if capture::stop() {
                reply(&mut stream, "ok stopped")
            } else {
                reply(&mut stream, "error no capture in progress")
            }
        }
        Ok(Request::Watch) => {
            if let Err(e) = watch::run(&mut stream) {
                reply(&mut stream, &format!("error {e}"))
            }
        }
        Ok(Request::Capture {
            frames,
            format,
            path,
        }) => {
            // A client that stops reading cannot hold the capture's end (nor the exit
            // handler waiting for it) longer than this.
            let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
            capture::run(frames, format, &path, &mut |line| reply(&mut stream, line));
        }
    }
}
