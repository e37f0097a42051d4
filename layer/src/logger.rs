//! The layer's own diagnostics on stderr, through the `log` crate.
//!
//! `UTRACE_LOG=off|error|warn|info|debug|trace` picks the level (`warn` by default, so that
//! messages about bad input are always seen). Lines start with `utrace:` so they stand out
//! among the application's own output.

use std::io::Write;

struct StderrLogger;

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
        // One write per line so that lines from several threads do not interleave.
        let line = format!("utrace: {level}: {}\n", record.args());
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    fn flush(&self) {}
}

static LOGGER: StderrLogger = StderrLogger;

/// Installs the logger once. The layer links its own copy of `log`, so this never competes
/// with a logger the application installed for itself.
pub fn init(level: log::LevelFilter) {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}
