//! The csv format (the layer's `sink/csv.rs`): a header, one row per event, and one
//! `end_of_trace` row per device with its batch columns empty.

use super::{number, origin, submit_times, Batch, Event, Trace};

/// How every header of the layer's csv begins; which columns follow is read from it (a
/// `thread` column came with the submitting thread, `submitted` with its submit time; older
/// traces lack them).
pub const HEADER_START: &str = "device,batch,frame,submission,";

/// The columns the reader uses, by their place in the header.
struct Columns {
    device: usize,
    batch: usize,
    frame: usize,
    submission: usize,
    thread: Option<usize>,
    submitted: Option<usize>,
    ns: usize,
    event: usize,
    args: usize,
    /// The counters' columns (a trace made with `GPU_TRACE_COUNTERS`): each statistic or
    /// hardware counter (`perf_...`) and `partial`, by place and name; read back into the
    /// event's arguments.
    counters: Vec<(usize, String)>,
    count: usize,
}

impl Columns {
    fn of(header: &str) -> Result<Columns, String> {
        let names: Vec<&str> = header.split(',').collect();
        let at = |name: &str| names.iter().position(|n| *n == name);
        let need =
            |name: &str| at(name).ok_or_else(|| format!("the csv header has no {name:?} column"));
        Ok(Columns {
            device: need("device")?,
            batch: need("batch")?,
            frame: need("frame")?,
            submission: need("submission")?,
            thread: at("thread"),
            submitted: at("submitted"),
            ns: need("ns")?,
            event: need("event")?,
            args: need("args")?,
            counters: names
                .iter()
                .enumerate()
                .filter(|(_, n)| {
                    utrace_format::COUNTER_NAMES.contains(n)
                        || **n == "partial"
                        || n.starts_with(utrace_format::PERF_PREFIX)
                })
                .map(|(i, n)| (i, n.to_string()))
                .collect(),
            count: names.len(),
        })
    }
}

pub fn parse(text: &str) -> Result<Trace, String> {
    let mut trace = Trace::default();
    let c = Columns::of(text.lines().next().unwrap_or_default())?;
    for (i, line) in text.lines().enumerate().skip(1) {
        let at = i + 1;
        if line.is_empty() {
            continue;
        }
        let Some(f) = fields(line) else {
            trace.notes.push(format!(
                "line {at}: an unterminated quote (cut short?); skipped"
            ));
            continue;
        };
        if f.len() != c.count {
            trace.notes.push(format!(
                "line {at}: {} columns, not {}; skipped",
                f.len(),
                c.count
            ));
            continue;
        }
        if f[c.batch].is_empty() {
            // A device's header (`trace`) or end_of_trace row.
            if f[c.event] == utrace_format::header::TRACE_KIND {
                if let Some(device) = number(&f[c.device]).and_then(|d| u32::try_from(d).ok()) {
                    let pairs = utrace_format::text_args::parse(&f[c.args]);
                    origin::merge(&mut trace.origins, device, pairs);
                }
            }
            continue;
        }
        let parsed = (|| {
            let batch = Batch {
                device: u32::try_from(number(&f[c.device])?).ok()?,
                number: number(&f[c.batch])?,
                queue: None,
                frame: number(&f[c.frame])?,
                submission: number(&f[c.submission])?,
                thread: c.thread.and_then(|t| number(&f[t])),
                // Read below, where what is wrong with it can be said.
                submit_ns: None,
                events: Vec::new(),
            };
            let mut args = f[c.args].clone();
            for (i, name) in &c.counters {
                let i = *i;
                if !f[i].is_empty() {
                    if !args.is_empty() {
                        args.push_str(", ");
                    }
                    args.push_str(&format!("{name}={}", f[i]));
                }
            }
            let event = Event {
                ns: number(&f[c.ns])?,
                name: f[c.event].clone(),
                args,
            };
            Some((batch, event))
        })();
        let Some((batch, event)) = parsed else {
            trace
                .notes
                .push(format!("line {at}: a malformed row; skipped"));
            continue;
        };
        // Every row repeats its batch's submit time; the first row's is the batch's.
        let raw = c.submitted.map(|s| f[s].as_str()).filter(|s| !s.is_empty());
        match trace.batches.last_mut() {
            Some(b) if b.device == batch.device && b.number == batch.number => b.events.push(event),
            _ => {
                let submit_ns = match submit_times::parse(raw) {
                    Ok(submitted) => submitted,
                    Err(e) => {
                        trace.notes.push(format!("line {at}: {e}"));
                        None
                    }
                };
                trace.batches.push(Batch {
                    events: vec![event],
                    submit_ns,
                    ..batch
                })
            }
        }
    }
    Ok(trace)
}

/// The fields of one row: quoted fields may hold commas, a doubled quote is a quote.
/// `None` when a quote is left open.
fn fields(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => out.push(std::mem::take(&mut field)),
            (_, c) => field.push(c),
        }
    }
    if quoted {
        return None;
    }
    out.push(field);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_make_batches() {
        let text = "device,batch,frame,submission,thread,ns,delta,depth,event,args\n\
             0,1,0,1,77,1000,0,0,start_cmd_buffer,\"cmd=0xabc, level=primary\"\n\
             0,1,0,1,77,1500,500,1,begin_label,\"label=\"\"x, y\"\"\"\n\
             0,1,0,1,77,1600,100,1,end_label,\n\
             0,2,1,2,78,2000,0,0,start_cmd_buffer,\"cmd=0xabc\"\n\
             0,,,,,,,,end_of_trace,\"batches=2, events=4, dropped=0\"\n";
        let t = parse(text).unwrap();
        assert!(t.notes.is_empty(), "{:?}", t.notes);
        assert_eq!(t.batches.len(), 2);
        assert_eq!(t.batches[0].events.len(), 3);
        assert_eq!(t.batches[0].events[1].args, "label=\"x, y\"");
        assert_eq!((t.batches[1].frame, t.batches[1].thread), (1, Some(78)));
    }

    /// Traces of layers before the `thread` column.
    #[test]
    fn counter_columns_are_read_into_the_arguments() {
        let text = format!(
            "{}0,1,0,1,7,,100,0,0,start_dispatch,\"x=1\",,,,,,,,,,\n\
             0,1,0,1,7,,200,100,0,end_dispatch,,,,,,,,960,,,1\n",
            utrace_format::CSV_HEADER_COUNTERS
        );
        let t = parse(&text).unwrap();
        assert!(t.notes.is_empty(), "{:?}", t.notes);
        assert_eq!(t.batches[0].events[0].args, "x=1");
        assert_eq!(
            t.batches[0].events[1].args,
            "compute_invocations=960, partial=1"
        );
    }

    #[test]
    fn the_older_header_is_read_too() {
        let text = "device,batch,frame,submission,ns,delta,depth,event,args\n\
             0,1,0,1,1000,0,0,start_cmd_buffer,\"cmd=0xabc\"\n";
        let t = parse(text).unwrap();
        assert_eq!(t.batches[0].events[0].ns, 1000);
        assert_eq!(t.batches[0].thread, None);
        assert!(parse("device,batch,frame,submission,when\n").is_err());
    }

    #[test]
    fn a_row_cut_short_is_noted() {
        let text = "device,batch,frame,submission,thread,ns,delta,depth,event,args\n\
                    0,1,0,1,7,1000,0,0,start_cmd_buffer,\"cmd=0x";
        let t = parse(text).unwrap();
        assert!(t.batches.is_empty());
        assert!(t.notes[0].contains("line 2"), "{:?}", t.notes);
    }
}
