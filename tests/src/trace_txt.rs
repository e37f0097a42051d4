//! Reads the layer's `txt` trace back (the format the README describes), strictly: a line
//! that is not part of the format is an error, so a test notices stray output.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub ns: u64,
    pub delta: i64,
    /// Open ranges around the event (its indentation).
    pub depth: usize,
    pub name: String,
    pub args: Vec<(String, String)>,
}

impl Event {
    /// The value of argument `name` (quoted values unescaped).
    pub fn arg(&self, name: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub number: u64,
    pub device: u32,
    pub queue: String,
    pub frame: u32,
    pub submission: u64,
    pub cmdbufs: u32,
    /// Timestamp queries the batch wrote.
    pub queries: u32,
    /// The thread that submitted it.
    pub thread: u32,
    /// When its submit call began, on the events' clock (`submitted=`).
    pub submitted: Option<u64>,
    pub events: Vec<Event>,
    pub elapsed_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndOfTrace {
    pub device: u32,
    pub batches: u64,
    pub events: u64,
    pub dropped: u64,
}

/// What the trace holds, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Batch(usize),
    EndOfFrame(u32),
    EndOfTrace(usize),
}

#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub batches: Vec<Batch>,
    pub ends: Vec<EndOfTrace>,
    pub items: Vec<Item>,
}

impl Trace {
    pub fn frames_ended(&self) -> Vec<u32> {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::EndOfFrame(f) => Some(*f),
                _ => None,
            })
            .collect()
    }
}

/// `key=value` pairs of a header line such as `device=0 queue=0x1 frame=2`.
fn header_fields(text: &str) -> Result<Vec<(&str, &str)>, String> {
    text.split_whitespace()
        .map(|kv| {
            kv.split_once('=')
                .ok_or_else(|| format!("`{kv}` is not key=value"))
        })
        .collect()
}

fn field<T: std::str::FromStr>(fields: &[(&str, &str)], key: &str) -> Result<T, String> {
    let (_, v) = fields
        .iter()
        .find(|(k, _)| *k == key)
        .ok_or_else(|| format!("missing {key}="))?;
    v.parse().map_err(|_| format!("{key}={v} is not a number"))
}

/// A field older traces may lack: `None` when absent, an error when not a number.
fn optional_field(fields: &[(&str, &str)], key: &str) -> Result<Option<u64>, String> {
    match fields.iter().any(|(k, _)| *k == key) {
        true => field(fields, key).map(Some),
        false => Ok(None),
    }
}

/// Splits `a=1, b="x, \"y\"", c=2` into pairs, unescaping quoted values.
pub fn parse_args(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut args = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (key, after) = rest
            .split_once('=')
            .ok_or_else(|| format!("argument without `=` in `{rest}`"))?;
        let mut value = String::new();
        let remaining;
        if let Some(quoted) = after.strip_prefix('"') {
            let mut chars = quoted.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some((_, 'n')) => value.push('\n'),
                        Some((_, 'u')) => {
                            let hex: String = (0..4)
                                .filter_map(|_| chars.next().map(|(_, c)| c))
                                .collect();
                            let code = u32::from_str_radix(&hex, 16)
                                .map_err(|_| format!("bad \\u escape {hex:?}"))?;
                            value.push(char::from_u32(code).ok_or("bad \\u escape")?);
                        }
                        Some((_, c)) => value.push(c),
                        None => return Err("dangling escape".into()),
                    },
                    '"' => {
                        end = Some(i);
                        break;
                    }
                    c => value.push(c),
                }
            }
            let end = end.ok_or("unterminated quoted value")?;
            remaining = &quoted[end + 1..];
        } else {
            let end = after.find(", ").unwrap_or(after.len());
            value.push_str(&after[..end]);
            remaining = &after[end..];
        }
        args.push((key.to_string(), value));
        rest = match remaining.strip_prefix(", ") {
            Some(r) => r,
            None if remaining.is_empty() => "",
            None => return Err(format!("unexpected `{remaining}` after a value")),
        };
    }
    Ok(args)
}

fn parse_event(line: &str) -> Result<Event, String> {
    let (ns, rest) = line.split_at_checked(16).ok_or("short event line")?;
    let ns: u64 = ns
        .parse()
        .map_err(|_| format!("`{ns}` is not a 16-digit time"))?;
    let rest = rest.strip_prefix(' ').ok_or("no space after the time")?;
    let (delta, rest) = rest.split_once(": ").ok_or("no `: ` after the delta")?;
    let delta: i64 = delta
        .trim_start()
        .parse()
        .map_err(|_| format!("bad delta `{delta}`"))?;
    let indent = rest.len() - rest.trim_start_matches(' ').len();
    if indent % 3 != 0 {
        return Err(format!(
            "indentation of {indent} spaces is not a multiple of 3"
        ));
    }
    let rest = &rest[indent..];
    let (name, args) = match rest.split_once(": ") {
        Some((name, args)) => (name, parse_args(args)?),
        None => (rest, Vec::new()),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("bad tracepoint name `{name}`"));
    }
    Ok(Event {
        ns,
        delta,
        depth: indent / 3,
        name: name.to_string(),
        args,
    })
}

pub fn parse_trace(text: &str) -> Result<Trace, String> {
    let mut trace = Trace::default();
    let mut open: Option<Batch> = None;
    let mut expect_columns = false;
    for (n, line) in text.lines().enumerate() {
        let err = |e: String| format!("line {}: {e}: {line:?}", n + 1);
        if line.trim().is_empty() {
            continue;
        }
        if expect_columns {
            if line != "+----- NS -----+ +-- Δ --+  +----- MSG -----" {
                return Err(err("expected the column header".into()));
            }
            expect_columns = false;
            continue;
        }
        if let Some(batch) = open.as_mut() {
            if let Some(elapsed) = line.strip_prefix("ELAPSED: ") {
                let ns = elapsed
                    .strip_suffix(" ns")
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| err("bad ELAPSED".into()))?;
                batch.elapsed_ns = ns;
                trace.items.push(Item::Batch(trace.batches.len()));
                trace.batches.push(open.take().expect("open batch"));
            } else {
                batch.events.push(parse_event(line).map_err(err)?);
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("BATCH ") {
            let (number, fields) = rest
                .split_once(": ")
                .ok_or_else(|| err("bad BATCH".into()))?;
            let fields = header_fields(fields).map_err(err)?;
            open = Some(Batch {
                number: number.parse().map_err(|_| err("bad batch number".into()))?,
                device: field(&fields, "device").map_err(err)?,
                queue: fields
                    .iter()
                    .find(|(k, _)| *k == "queue")
                    .map(|(_, v)| v.to_string())
                    .ok_or_else(|| err("missing queue=".into()))?,
                frame: field(&fields, "frame").map_err(err)?,
                submission: field(&fields, "submission").map_err(err)?,
                cmdbufs: field(&fields, "cmdbufs").map_err(err)?,
                queries: field(&fields, "queries").map_err(err)?,
                thread: field(&fields, "thread").map_err(err)?,
                submitted: optional_field(&fields, "submitted").map_err(err)?,
                ..Batch::default()
            });
            expect_columns = true;
        } else if let Some(frame) = line.strip_prefix("END OF FRAME ") {
            let frame = frame.parse().map_err(|_| err("bad frame number".into()))?;
            trace.items.push(Item::EndOfFrame(frame));
        } else if let Some(rest) = line.strip_prefix("END OF TRACE: ") {
            let fields = header_fields(rest).map_err(err)?;
            trace.items.push(Item::EndOfTrace(trace.ends.len()));
            trace.ends.push(EndOfTrace {
                device: field(&fields, "device").map_err(err)?,
                batches: field(&fields, "batches").map_err(err)?,
                events: field(&fields, "events").map_err(err)?,
                dropped: field(&fields, "dropped").map_err(err)?,
            });
        } else {
            return Err(err("not part of the trace format".into()));
        }
    }
    if open.is_some() {
        return Err("the last batch has no ELAPSED line".into());
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
BATCH 1: device=0 queue=0x55d0c8f0a1b0 frame=0 submission=1 cmdbufs=1 queries=4 thread=4242
+----- NS -----+ +-- Δ --+  +----- MSG -----
0000123456789012        +0: start_cmd_buffer: cmd=0x55d0c8f0b000, level=primary, usage=one_time_submit
0000123456790000      +988:    begin_label: label=\"say \\\"hi\\\", twice\", depth=1
0000123456780000    -10000:    end_label
0000123456792356     +3344: end_cmd_buffer: cmd=0x55d0c8f0b000
ELAPSED: 3344 ns
END OF FRAME 0
END OF TRACE: device=0 batches=1 events=4 dropped=0
";

    #[test]
    fn parses_the_documented_format() {
        let t = parse_trace(SAMPLE).unwrap();
        assert_eq!(t.batches.len(), 1);
        let b = &t.batches[0];
        assert_eq!(
            (b.number, b.device, b.frame, b.submission, b.cmdbufs),
            (1, 0, 0, 1, 1)
        );
        assert_eq!(b.queue, "0x55d0c8f0a1b0");
        assert_eq!(b.events.len(), 4);
        assert_eq!(b.events[0].arg("usage"), Some("one_time_submit"));
        assert_eq!(b.events[1].depth, 1);
        assert_eq!(b.events[1].arg("label"), Some("say \"hi\", twice"));
        assert_eq!(b.events[1].arg("depth"), Some("1"));
        assert_eq!(b.events[2].delta, -10000);
        assert!(b.events[2].args.is_empty());
        assert_eq!(b.elapsed_ns, 3344);
        assert_eq!(t.frames_ended(), vec![0]);
        assert_eq!(
            t.ends,
            vec![EndOfTrace {
                device: 0,
                batches: 1,
                events: 4,
                dropped: 0
            }]
        );
        assert_eq!(
            t.items,
            vec![Item::Batch(0), Item::EndOfFrame(0), Item::EndOfTrace(0)]
        );
    }

    #[test]
    fn wide_deltas_and_values_with_equals_signs() {
        // `{:+9}` grows past nine characters for deltas of a second or more.
        let text = "\
BATCH 2: device=1 queue=0x1 frame=7 submission=9 cmdbufs=1 queries=2 thread=4242
+----- NS -----+ +-- Δ --+  +----- MSG -----
0000000000000000        +0: start_cmd_buffer: cmd=0x2, level=secondary, usage=one_time_submit|simultaneous_use
0000012345678901 +12345678901: end_cmd_buffer: cmd=0x2, note=a=b
ELAPSED: 12345678901 ns
";
        let t = parse_trace(text).unwrap();
        let b = &t.batches[0];
        assert_eq!((b.number, b.device, b.frame, b.submission), (2, 1, 7, 9));
        assert_eq!(b.events[1].delta, 12_345_678_901);
        assert_eq!(b.events[1].arg("note"), Some("a=b"));
        assert_eq!(
            b.events[0].arg("usage"),
            Some("one_time_submit|simultaneous_use")
        );
        assert!(t.ends.is_empty() && t.frames_ended().is_empty());
    }

    #[test]
    fn lines_out_of_place_are_errors() {
        // An event outside a batch.
        let event = "0000123456789012        +0: start_cmd_buffer: cmd=0x1\n";
        assert!(parse_trace(event).is_err());
        // A frame's end inside an open batch.
        let inside = SAMPLE.replace(
            "ELAPSED: 3344 ns\nEND OF FRAME 0\n",
            "END OF FRAME 0\nELAPSED: 3344 ns\n",
        );
        assert!(parse_trace(&inside).is_err());
        // A batch header without its column header.
        let no_columns = SAMPLE.replace("+----- NS -----+ +-- Δ --+  +----- MSG -----\n", "");
        assert!(parse_trace(&no_columns).is_err());
        // An unterminated quoted value.
        assert!(parse_args("label=\"open, depth=1").is_err());
        // Blank lines are fine.
        assert!(parse_trace(&SAMPLE.replace('\n', "\n\n")).is_ok());
    }

    #[test]
    fn stray_lines_are_errors() {
        let e = parse_trace("hello\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        let cut = SAMPLE.replace("ELAPSED: 3344 ns\n", "");
        assert!(parse_trace(&cut).is_err());
        let bad_indent = SAMPLE.replace("+988:    begin", "+988:  begin");
        assert!(parse_trace(&bad_indent).is_err());
    }
}
