//! A trace as the layer wrote it, in any of its formats (txt, json, csv, Perfetto), read
//! into one model: batches of events, each event its GPU time, tracepoint name and
//! arguments. The format is told from the content, not the file's name.

mod csv;
mod json;
pub mod origin;
mod perfetto;
mod perfetto_batches;
pub mod perfetto_write;
mod submit_times;
mod txt;

use std::path::Path;

/// One event of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub ns: u64,
    pub name: String,
    /// `name=value, ...`, as the txt and csv formats write them (json's object, rewritten).
    pub args: String,
}

#[cfg(test)]
impl Event {
    /// An event of the tests' traces.
    pub fn at(ns: u64, name: &str, args: &str) -> Event {
        Event {
            ns,
            name: name.into(),
            args: args.into(),
        }
    }
}

/// One submitted batch (the txt format's `BATCH` block).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    pub device: u32,
    pub number: u64,
    /// The queue's handle; csv does not say it.
    pub queue: Option<u64>,
    pub frame: u64,
    pub submission: u64,
    /// The thread that submitted it; traces of older layers do not say.
    pub thread: Option<u64>,
    /// When the submit call began on the CPU, on the trace's (GPU) clock: Perfetto traces
    /// carry it (their `vk_queue_submit` and clock snapshots), the text formats as the
    /// batch's `submitted`; traces of older layers do not.
    pub submit_ns: Option<u64>,
    pub events: Vec<Event>,
}

pub use utrace_format::Format;

#[derive(Debug, Default)]
pub struct Trace {
    pub batches: Vec<Batch>,
    /// Each device's header, where the trace has one (layers before it wrote none).
    pub origins: Vec<origin::Origin>,
    /// What the reader noticed and could not use (a trace cut short, lines it skipped).
    pub notes: Vec<String>,
}

/// Reads the trace at `path`, its format told from its first bytes.
pub fn read(path: &Path) -> Result<Trace, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&bytes, path)
}

/// A trace's bytes, read from `path` (named in errors), its format told from its start.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Trace, String> {
    let name = path.display();
    if bytes.is_empty() {
        return Err(format!("{name}: the file is empty"));
    }
    let format = detect(bytes).ok_or_else(|| {
        format!("{name}: not a trace of utrace's (txt, json, csv or Perfetto) by its start")
    })?;
    let text = || String::from_utf8_lossy(bytes);
    let mut trace = match format {
        Format::Txt => txt::parse(&text()),
        Format::Json => json::parse(&text()),
        Format::Csv => csv::parse(&text()),
        Format::Perfetto => perfetto::parse(bytes),
    }
    .map_err(|e| format!("{name}: {e}"))?;
    submit_times::check(&mut trace);
    Ok(trace)
}

/// Reads a trace for a command: what the reader noticed goes to stderr, a trace without a
/// batch is an error.
pub fn load(path: &Path) -> Result<Trace, String> {
    let t = read(path)?;
    for note in &t.notes {
        eprintln!("utrace: {}: {note}", path.display());
    }
    if t.batches.is_empty() {
        return Err(format!("{}: the trace holds no batch", path.display()));
    }
    Ok(t)
}

/// The format of a trace by its first line (a Perfetto trace: its first packet); `None`
/// when it is none of the layer's.
pub fn detect(bytes: &[u8]) -> Option<Format> {
    if perfetto::detect(bytes) {
        return Some(Format::Perfetto);
    }
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    if first.starts_with("BATCH ")
        || first.starts_with(utrace_format::header::TXT_PREFIX)
        || first.starts_with("END OF TRACE")
        || first.starts_with("END OF FRAME")
    {
        Some(Format::Txt)
    } else if first.starts_with("{\"type\":") {
        Some(Format::Json)
    } else if first.starts_with(csv::HEADER_START) {
        Some(Format::Csv)
    } else {
        None
    }
}

/// The number after `key=` among the space-separated `key=value` of a header line.
fn header_field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split([' ', ':'])
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

fn number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_their_first_line() {
        assert_eq!(detect(b"BATCH 1: device=0 queue=0x1\n"), Some(Format::Txt));
        assert_eq!(
            detect(b"END OF TRACE: device=0 batches=0\n"),
            Some(Format::Txt)
        );
        assert_eq!(detect(b"{\"type\":\"batch\"}\n"), Some(Format::Json));
        assert_eq!(
            detect(b"device,batch,frame,submission,ns,delta,depth,event,args\n"),
            Some(Format::Csv)
        );
        assert_eq!(detect(b"\x0a\x0b perfetto"), None);
        assert_eq!(detect(b"hello\n"), None);
    }

    #[test]
    fn header_fields() {
        let line = "BATCH 3: device=1 queue=0x10 frame=2 submission=5";
        assert_eq!(header_field(line, "queue").and_then(number), Some(16));
        assert_eq!(header_field(line, "frame").and_then(number), Some(2));
        assert_eq!(header_field(line, "missing"), None);
    }
}
