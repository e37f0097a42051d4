//! The layer's own diagnostics on stderr, through the `log` crate.
//!
//! `UTRACE_LOG=off|error|warn|info|debug|trace` picks the level (`warn` by default, so that
//! messages about bad input are always seen). Lines start with `utrace:` so they stand out
//! among the application's own output.

use std::fmt::Write as _;

struct StderrLogger;

/// Bytes a line may take on the stack; longer ones are written as they are formatted.
const LINE_BYTES: usize = 2048;

/// A line formatted on the stack; full once [`LINE_BYTES`] are taken (the write fails).
struct LineBuffer {
    bytes: [u8; LINE_BYTES],
    len: usize,
}

impl LineBuffer {
    fn new() -> LineBuffer {
        LineBuffer {
            bytes: [0; LINE_BYTES],
            len: 0,
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl std::fmt::Write for LineBuffer {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let room = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        room.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let level = match record.level() {
            log::Level::Error => "error",
            log::Level::Warn => "warning",
            log::Level::Info => "info",
            log::Level::Debug => "debug",
            log::Level::Trace => "trace",
        };
        write_line(&mut std::io::stderr().lock(), level, record.args());
    }

    fn flush(&self) {}
}

/// Writes `utrace: LEVEL: MESSAGE` to `out` in one write, so that lines from several threads
/// do not interleave, formatted in a buffer on the stack: a warning said on the
/// application's thread (a long wait in a submission) must not allocate there, as nothing
/// else on that path does. A line longer than the buffer is formatted on the heap.
fn write_line(out: &mut dyn std::io::Write, level: &str, args: &std::fmt::Arguments) {
    let mut line = LineBuffer::new();
    if writeln!(line, "utrace: {level}: {args}").is_ok() {
        let _ = out.write_all(line.bytes());
    } else {
        let _ = out.write_all(format!("utrace: {level}: {args}\n").as_bytes());
    }
}

static LOGGER: StderrLogger = StderrLogger;

/// Installs the logger once. The layer links its own copy of `log`, so this never competes
/// with a logger the application installed for itself.
pub fn init(level: log::LevelFilter) {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(debug_assertions)]
    #[test]
    fn a_line_is_formatted_without_the_heap_and_written_once() {
        let mut out = [0u8; 256];
        let mut to: &mut [u8] = &mut out;
        let before = crate::alloc_count::utrace_debug_allocations_on_this_thread();
        write_line(
            &mut to,
            "warning",
            &format_args!("waited {:.1} ms for {}", 12.31, "it"),
        );
        let after = crate::alloc_count::utrace_debug_allocations_on_this_thread();
        let left = to.len();
        assert_eq!(after - before, 0);
        assert_eq!(
            &out[..256 - left],
            b"utrace: warning: waited 12.3 ms for it\n"
        );
    }

    #[test]
    fn a_line_longer_than_the_buffer_is_written_whole() {
        let long = "x".repeat(LINE_BYTES * 2);
        let mut out = Vec::new();
        write_line(&mut out, "error", &format_args!("{long}"));
        assert_eq!(out.len(), "utrace: error: ".len() + long.len() + 1);
        assert!(out.ends_with(b"x\n"));
    }
}
