//! The terminal of `utrace top`, by hand with termios (a few calls: no terminal library
//! for them): keys read one at a time without echo (`q`, Ctrl-C as a byte), the alternate
//! screen, and everything put back when [`Raw`] is dropped, on every way out: `SIGTERM`,
//! `SIGHUP`, and `SIGINT` or `SIGQUIT` sent by pid (the keys send none while the terminal
//! is raw) end the wait as `q` does, instead of leaving the terminal raw.

use std::io::Write;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

const STDIN: RawFd = 0;

/// The terminal in raw mode on the alternate screen, until dropped.
pub struct Raw {
    saved: libc::termios,
}

impl Raw {
    pub fn enter() -> std::io::Result<Raw> {
        // SAFETY: a zeroed termios is valid memory for tcgetattr to fill; fd 0 is ours.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: `saved` is a valid termios to write.
        if unsafe { libc::tcgetattr(STDIN, &mut saved) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut raw = saved;
        // Keys one at a time, unechoed; Ctrl-C arrives as a byte, so that leaving always
        // goes through the drop below. Output processing stays (newlines still return).
        raw.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN);
        raw.c_iflag &= !(libc::IXON | libc::ICRNL);
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        // SAFETY: `raw` is a termios filled by tcgetattr and changed in its flags only.
        if unsafe { libc::tcsetattr(STDIN, libc::TCSAFLUSH, &raw) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let entered = Raw { saved };
        for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT] {
            // SAFETY: a zeroed sigaction with a handler that only stores to an atomic (which
            // is async-signal-safe); no SA_RESTART, so that `poll` returns EINTR.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
        // Alternate screen, cursor hidden.
        write_out("\x1b[?1049h\x1b[?25l");
        Ok(entered)
    }

    /// The terminal's columns and rows (80x24 when it does not say).
    pub fn size() -> (usize, usize) {
        // SAFETY: a zeroed winsize is valid memory for TIOCGWINSZ to fill.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: TIOCGWINSZ writes a winsize into `size`, a valid one.
        let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut size) } == 0;
        if ok && size.ws_col > 0 && size.ws_row > 0 {
            (usize::from(size.ws_col), usize::from(size.ws_row))
        } else {
            (80, 24)
        }
    }

    /// Draws `lines` from the top left, each cut to the width, the rest cleared.
    pub fn draw(&self, lines: &[String]) {
        let (columns, rows) = Raw::size();
        let mut out = String::from("\x1b[H");
        for line in lines.iter().take(rows) {
            out.extend(line.chars().take(columns));
            out.push_str("\x1b[K\r\n");
        }
        out.push_str("\x1b[J");
        write_out(&out);
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        write_out("\x1b[?25h\x1b[?1049l");
        // SAFETY: `saved` is the termios tcgetattr gave for fd 0.
        unsafe { libc::tcsetattr(STDIN, libc::TCSAFLUSH, &self.saved) };
    }
}

fn write_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Set by `SIGTERM`, `SIGHUP`, `SIGINT` or `SIGQUIT` once the terminal is raw.
static ASKED_TO_LEAVE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    ASKED_TO_LEAVE.store(true, Ordering::Relaxed);
}

/// What [`wait`] found ready.
pub struct Ready {
    pub keys: bool,
    pub socket: bool,
    /// A signal asked `utrace top` to leave.
    pub leave: bool,
}

/// Waits until a key is pressed (when `keys`) or the socket `socket` has something to read.
pub fn wait(keys: bool, socket: RawFd) -> std::io::Result<Ready> {
    let mut fds = [
        libc::pollfd {
            fd: socket,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: if keys { STDIN } else { -1 },
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        if ASKED_TO_LEAVE.load(Ordering::Relaxed) {
            return Ok(Ready {
                keys: false,
                socket: false,
                leave: true,
            });
        }
        // SAFETY: `fds` is an array of two valid pollfds (a negative fd is ignored).
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n >= 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let ready = |f: &libc::pollfd| f.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0;
    Ok(Ready {
        socket: ready(&fds[0]),
        keys: ready(&fds[1]),
        leave: false,
    })
}
