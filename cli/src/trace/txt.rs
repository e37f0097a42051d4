//! The txt format (the layer's `sink/txt.rs`): `BATCH` blocks of event lines, each block
//! closed by `ELAPSED`; `END OF FRAME` and `END OF TRACE` lines between them.

use super::{header_field, number, origin, submit_times, Batch, Event, Trace};

pub fn parse(text: &str) -> Result<Trace, String> {
    let mut trace = Trace::default();
    let mut open: Option<Batch> = None;
    for (i, line) in text.lines().enumerate() {
        let at = i + 1;
        if let Some(rest) = line.strip_prefix("BATCH ") {
            if let Some(batch) = open.take() {
                trace.notes.push(format!(
                    "line {at}: batch {} has no ELAPSED line; kept as far as it goes",
                    batch.number
                ));
                trace.batches.push(batch);
            }
            let mut batch = batch_header(rest, line)
                .ok_or_else(|| format!("line {at}: a malformed BATCH line"))?;
            match submit_times::parse(header_field(line, "submitted")) {
                Ok(submitted) => batch.submit_ns = submitted,
                Err(e) => trace.notes.push(format!("line {at}: {e}")),
            }
            open = Some(batch);
        } else if let Some(rest) = line.strip_prefix(utrace_format::header::TXT_PREFIX) {
            match origin::txt_line(rest) {
                Some((device, pairs)) => origin::merge(&mut trace.origins, device, pairs),
                None => trace
                    .notes
                    .push(format!("line {at}: a malformed TRACE line, skipped")),
            }
        } else if line.starts_with("ELAPSED: ") {
            match open.take() {
                Some(batch) => trace.batches.push(batch),
                None => trace
                    .notes
                    .push(format!("line {at}: ELAPSED outside a batch")),
            }
        } else if line.starts_with("+-") || line.starts_with("END OF ") || line.is_empty() {
            // The column header, frame ends and the trace's end carry no events.
        } else if let Some(batch) = open.as_mut() {
            match event(line) {
                Some(e) => batch.events.push(e),
                None => trace
                    .notes
                    .push(format!("line {at}: not an event line, skipped")),
            }
        } else {
            trace
                .notes
                .push(format!("line {at}: outside any batch, skipped"));
        }
    }
    if let Some(batch) = open.take() {
        trace.notes.push(format!(
            "the trace ends inside batch {} (cut short?); kept as far as it goes",
            batch.number
        ));
        trace.batches.push(batch);
    }
    Ok(trace)
}

/// `N: device=D queue=0xQ frame=F submission=S ...`
fn batch_header(rest: &str, line: &str) -> Option<Batch> {
    let batch_number = rest.split(':').next()?.trim().parse().ok()?;
    Some(Batch {
        device: header_field(line, "device").and_then(number_u32)?,
        number: batch_number,
        queue: header_field(line, "queue").and_then(number),
        frame: header_field(line, "frame").and_then(number)?,
        submission: header_field(line, "submission").and_then(number)?,
        thread: header_field(line, "thread").and_then(number),
        // Read by the caller, which can say what is wrong with it.
        submit_ns: None,
        events: Vec::new(),
    })
}

fn number_u32(text: &str) -> Option<u32> {
    number(text).and_then(|n| u32::try_from(n).ok())
}

/// `NNNNNNNNNNNNNNNN    +DELTA: <indent>name[: args]`
fn event(line: &str) -> Option<Event> {
    let (ns, rest) = line.split_once(' ')?;
    let ns = ns.parse().ok()?;
    let (_delta, rest) = rest.split_once(": ")?;
    let rest = rest.trim_start();
    let (name, args) = match rest.split_once(": ") {
        Some((name, args)) => (name, args),
        None => (rest, ""),
    };
    if name.is_empty() || name.contains(' ') {
        return None;
    }
    Some(Event {
        ns,
        name: name.to_string(),
        args: args.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "\
BATCH 1: device=0 queue=0x10 frame=2 submission=5 cmdbufs=1 queries=2
+----- NS -----+ +-- Δ --+  +----- MSG -----
0000000001000000        +0: start_cmd_buffer: cmd=0xabc, level=primary, usage=one_time_submit
0000000001000100      +100:    begin_label: label=\"a: b\"
0000000001000200      +100:    end_label
0000000001003344     +3144: end_cmd_buffer: cmd=0xabc
ELAPSED: 3344 ns
END OF FRAME 2
END OF TRACE: device=0 batches=1 events=4 dropped=0
";

    #[test]
    fn reads_a_batch() {
        let t = parse(TRACE).unwrap();
        assert!(t.notes.is_empty(), "{:?}", t.notes);
        assert_eq!(t.batches.len(), 1);
        let b = &t.batches[0];
        assert_eq!(
            (b.device, b.number, b.queue, b.frame, b.submission),
            (0, 1, Some(16), 2, 5)
        );
        let names: Vec<&str> = b.events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "start_cmd_buffer",
                "begin_label",
                "end_label",
                "end_cmd_buffer"
            ]
        );
        assert_eq!(b.events[1].args, "label=\"a: b\"");
        assert_eq!(b.events[3].ns, 1_003_344);
    }

    /// A submit time is read where it is one, and said where it is not.
    #[test]
    fn submit_times_are_read_or_said() {
        let with =
            |v: &str| TRACE.replacen("queries=2\n", &format!("queries=2 submitted={v}\n"), 1);
        let t = parse(&with("990000")).unwrap();
        assert_eq!(t.batches[0].submit_ns, Some(990_000));
        assert!(t.notes.is_empty(), "{:?}", t.notes);
        assert_eq!(parse(TRACE).unwrap().batches[0].submit_ns, None);
        let t = parse(&with("-5")).unwrap();
        assert_eq!(t.batches[0].submit_ns, None);
        assert!(
            t.notes[0].starts_with("line 1: submitted=\"-5\" is not a time"),
            "{:?}",
            t.notes
        );
    }

    #[test]
    fn a_trace_cut_short_is_kept_with_a_note() {
        let cut = &TRACE[..TRACE.find("0000000001003344").unwrap()];
        let t = parse(cut).unwrap();
        assert_eq!(t.batches[0].events.len(), 3);
        assert_eq!(t.notes.len(), 1);
        assert!(t.notes[0].contains("cut short"), "{:?}", t.notes);
    }

    #[test]
    fn a_malformed_batch_line_is_an_error() {
        assert!(parse("BATCH x: device=0\n").unwrap_err().contains("line 1"));
    }
}
