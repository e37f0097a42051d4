//! The client of the layer's control socket (`$XDG_RUNTIME_DIR/utrace/<pid>.sock`; the
//! protocol is described in the layer's `control` module and docs/captures.md), for `utrace
//! capture` and `utrace list`: one line sent per connection, reply lines read until the
//! layer closes it. The socket is only reached once found to be the layer's in a process
//! of this user ([`trust`]), and every reply line is made printable.

mod trust;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

pub use trust::{checked_folder, connect, printable};

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

/// Sends `line` to the socket at `path` (checked: [`connect`]); `on_line` is given each
/// reply line, its control characters escaped.
pub fn ask(path: &Path, line: &str, on_line: &mut dyn FnMut(&str)) -> std::io::Result<()> {
    let mut stream = connect(path)?;
    // The layer may answer (and close) before reading, as it does a refused peer: its
    // reply still counts when the request could not be written whole.
    let written = stream.write_all(format!("{line}\n").as_bytes());
    let mut replied = false;
    for reply in BufReader::new(stream).lines() {
        match reply {
            Ok(reply) => {
                replied = true;
                on_line(&printable(&reply));
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
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::UnixListener;

    /// A folder of this user's alone, as the layer makes it, removed at the end.
    pub struct Private(pub PathBuf);

    impl Private {
        pub fn new(name: &str) -> Private {
            let dir =
                std::env::temp_dir().join(format!("utrace-client-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
            Private(dir)
        }

        /// A listening socket named after this process, 0600, as the layer binds it.
        pub fn bind(&self) -> (PathBuf, UnixListener) {
            let path = self.0.join(format!("{}.sock", std::process::id()));
            let listener = UnixListener::bind(&path).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            (path, listener)
        }
    }

    impl Drop for Private {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A one-connection fake layer answering `lines` and closing.
    fn serve(
        listener: UnixListener,
        lines: &'static [&'static str],
    ) -> std::thread::JoinHandle<String> {
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
        let dir = Private::new("reset");
        let (path, listener) = dir.bind();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream.write_all(b"error the layer is busy\n").unwrap();
            // The request arrives and is left unread: closing now resets the connection.
            std::thread::sleep(std::time::Duration::from_millis(100));
        });
        let mut lines = Vec::new();
        let asked = ask(&path, "status", &mut |l| lines.push(l.to_string()));
        server.join().unwrap();
        assert!(asked.is_ok(), "{asked:?}");
        assert_eq!(lines, ["error the layer is busy"]);
    }

    #[test]
    fn replies_are_read_to_their_end_and_made_printable() {
        let dir = Private::new("replies");
        let (path, listener) = dir.bind();
        let server = serve(
            listener,
            &[
                "started",
                "done frames=5 batches=7 events=42 dropped=0",
                "name=\x1b[2J\x07ev\ril",
            ],
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
            [
                "started",
                "done frames=5 batches=7 events=42 dropped=0",
                "name=\\u{1b}[2J\\u{7}ev\\ril",
            ]
        );
        let missing = dir.0.join("9.sock");
        let missing = connect_error(9, &missing, &connect(&missing).unwrap_err());
        assert!(missing.contains("offers no control socket"), "{missing}");
    }
}
