//! The client of the layer's control socket (`$XDG_RUNTIME_DIR/utrace/<pid>.sock`; the
//! protocol is described in the layer's `control` module and the README), for `utrace
//! capture` and `utrace list`: one line sent per connection, reply lines read until the
//! layer closes it.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// The folder of the control sockets.
pub fn folder() -> Option<PathBuf> {
    std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| PathBuf::from(d).join("utrace"))
}

pub fn socket_of(pid: u32) -> Result<PathBuf, String> {
    let folder = folder().ok_or("XDG_RUNTIME_DIR is not set: no process can be reached")?;
    Ok(folder.join(format!("{pid}.sock")))
}

/// Sends `line` to the socket at `path`; `on_line` is given each reply line.
pub fn ask(path: &Path, line: &str, on_line: &mut dyn FnMut(&str)) -> std::io::Result<()> {
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
            // The layer closed a connection whose request it did not read (it said busy):
            // the reply stands.
            Err(e) if replied && e.kind() == std::io::ErrorKind::ConnectionReset => break,
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

pub fn connect_error(pid: u32, path: &Path, e: &std::io::Error) -> String {
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

    /// A busy layer answers without reading the request and closes: the client's read may
    /// then end in a reset, after the reply, which still stands.
    #[test]
    fn a_reply_before_a_reset_stands() {
        let dir = std::env::temp_dir().join(format!("utrace-client-reset-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("2.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream.write_all(b"error the layer is busy\n").unwrap();
            // The request arrives and is left unread: closing now resets the connection.
            std::thread::sleep(std::time::Duration::from_millis(100));
        });
        let mut lines = Vec::new();
        let asked = ask(&path, "status", &mut |l| lines.push(l.to_string()));
        server.join().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(asked.is_ok(), "{asked:?}");
        assert_eq!(lines, ["error the layer is busy"]);
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
