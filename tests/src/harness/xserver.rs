//! An X server for tests whose scenario presents frames: Xvfb, on the display it chooses.

use std::process::{Child, Command, Stdio};

/// An Xvfb server for one test, stopped when dropped.
pub struct XServer {
    child: Child,
    pub display: String,
}

impl XServer {
    pub fn start() -> XServer {
        use std::io::Read;
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "640x480x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb runs (package xvfb)");
        // Xvfb writes the display number it chose, then a newline, once it is ready.
        let mut out = child.stdout.take().expect("piped stdout");
        let mut number = String::new();
        let mut byte = [0u8; 1];
        while out.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            number.push(byte[0] as char);
        }
        assert!(!number.is_empty(), "Xvfb did not report a display");
        XServer {
            child,
            display: format!(":{}", number.trim()),
        }
    }
}

impl Drop for XServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
