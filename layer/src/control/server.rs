//! The control socket's listener and connections (see the module `control`).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::{Once, OnceLock};
use std::time::Duration;

use super::request::{self, Request, MAX_LINE};
use super::{capture, peer};

/// The socket's path, once it exists (removed at exit).
static SOCKET: OnceLock<PathBuf> = OnceLock::new();
/// How many devices are traced (for `status`), given by whoever started the socket.
static TRACED_DEVICES: OnceLock<fn() -> usize> = OnceLock::new();

/// Starts listening, once per process, unless there is no `XDG_RUNTIME_DIR` or the socket
/// cannot be made (said once; tracing goes on without it). `traced_devices` counts the
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
        match listen(PathBuf::from(runtime).join("utrace")) {
            Ok((listener, path)) => {
                log::info!("control socket {}", path.display());
                let _ = SOCKET.set(path);
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

/// `folder/<pid>.sock`: the folder made the user's alone (0700), the socket 0600.
fn listen(folder: PathBuf) -> Result<(UnixListener, PathBuf), String> {
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let meta = std::fs::metadata(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != peer::own_uid() {
        return Err(format!("{} belongs to another user", folder.display()));
    }
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("{}: {e}", folder.display()))?;
    let path = folder.join(format!("{}.sock", std::process::id()));
    // A socket left by an earlier process of this pid (it died without removing it).
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((listener, path))
}

/// Removes the socket (at exit); later connections find nothing.
pub fn remove_socket() {
    if let Some(path) = SOCKET.get() {
        let _ = std::fs::remove_file(path);
    }
}

fn serve(listener: UnixListener) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        // A capture's connection lasts as long as the capture: each has a thread.
        let _ = std::thread::Builder::new()
            .name("utrace-control".into())
            .spawn(move || {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(stream)));
            });
    }
}

fn reply(stream: &mut UnixStream, line: &str) {
    let _ = stream.write_all(format!("{line}\n").as_bytes());
}

fn handle(mut stream: UnixStream) {
    // The request is read first, even from a peer about to be refused: a socket closed with
    // unread input resets the connection, and the peer would not see why.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut line = Vec::new();
    let read = stream
        .try_clone()
        .map(|s| BufReader::new(s.take(MAX_LINE as u64 + 1)).read_until(b'\n', &mut line));
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
    if !matches!(read, Ok(Ok(_))) || line.len() > MAX_LINE {
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
                    "ok pid={} name={} devices={} capturing={}",
                    std::process::id(),
                    name.trim(),
                    TRACED_DEVICES.get().map_or(0, |count| count()),
                    u8::from(capture::capturing())
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
        Ok(Request::Capture {
            frames,
            format,
            path,
        }) => {
            let mut writer = match stream.try_clone() {
                Ok(s) => s,
                Err(e) => return reply(&mut stream, &format!("error {e}")),
            };
            let result = capture::run(frames, format, &path, &mut || reply(&mut writer, "started"));
            match result {
                Ok(d) => reply(
                    &mut stream,
                    &format!(
                        "done frames={} batches={} events={} dropped={}{} file={}",
                        d.frames,
                        d.batches,
                        d.events,
                        d.dropped,
                        if d.stopped { " stopped=1" } else { "" },
                        d.path
                    ),
                ),
                Err(e) => reply(&mut stream, &format!("error {e}")),
            }
        }
    }
}
