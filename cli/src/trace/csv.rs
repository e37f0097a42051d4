//! The csv format (the layer's `sink/csv.rs`): a header, one row per event, and one
//! `end_of_trace` row per device with its batch columns empty.

use super::{number, Batch, Event, Trace};

pub const HEADER: &str = "device,batch,frame,submission,ns,delta,depth,event,args";

pub fn parse(text: &str) -> Result<Trace, String> {
    let mut trace = Trace::default();
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
        if f.len() != 9 {
            trace
                .notes
                .push(format!("line {at}: {} columns, not 9; skipped", f.len()));
            continue;
        }
        if f[1].is_empty() {
            // A device's end_of_trace row.
            continue;
        }
        let parsed = (|| {
            let device = u32::try_from(number(&f[0])?).ok()?;
            let batch = number(&f[1])?;
            let event = Event {
                ns: number(&f[4])?,
                name: f[7].clone(),
                args: f[8].clone(),
            };
            Some((device, batch, number(&f[2])?, number(&f[3])?, event))
        })();
        let Some((device, batch, frame, submission, event)) = parsed else {
            trace
                .notes
                .push(format!("line {at}: a malformed row; skipped"));
            continue;
        };
        match trace.batches.last_mut() {
            Some(b) if b.device == device && b.number == batch => b.events.push(event),
            _ => trace.batches.push(Batch {
                device,
                number: batch,
                queue: None,
                frame,
                submission,
                events: vec![event],
            }),
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
        let text = format!(
            "{HEADER}\n\
             0,1,0,1,1000,0,0,start_cmd_buffer,\"cmd=0xabc, level=primary\"\n\
             0,1,0,1,1500,500,1,begin_label,\"label=\"\"x, y\"\"\"\n\
             0,1,0,1,1600,100,1,end_label,\n\
             0,2,1,2,2000,0,0,start_cmd_buffer,\"cmd=0xabc\"\n\
             0,,,,,,,end_of_trace,\"batches=2, events=4, dropped=0\"\n"
        );
        let t = parse(&text).unwrap();
        assert!(t.notes.is_empty(), "{:?}", t.notes);
        assert_eq!(t.batches.len(), 2);
        assert_eq!(t.batches[0].events.len(), 3);
        assert_eq!(t.batches[0].events[1].args, "label=\"x, y\"");
        assert_eq!(t.batches[1].frame, 1);
    }

    #[test]
    fn a_row_cut_short_is_noted() {
        let text = format!("{HEADER}\n0,1,0,1,1000,0,0,start_cmd_buffer,\"cmd=0x");
        let t = parse(&text).unwrap();
        assert!(t.batches.is_empty());
        assert!(t.notes[0].contains("line 2"), "{:?}", t.notes);
    }
}
