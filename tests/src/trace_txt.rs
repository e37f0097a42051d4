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

/// One line of a device's header: `TRACE DEVICE: device=0, device_name="...", ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderLine {
    pub device: u32,
    /// `ORIGIN`, `DEVICE`, `APPLICATION` or `SETTINGS`.
    pub section: String,
    pub fields: Vec<(String, String)>,
}

/// The sections of a header, in the order the layer writes them.
pub const HEADER_SECTIONS: [&str; 4] = ["ORIGIN", "DEVICE", "APPLICATION", "SETTINGS"];

/// What the trace holds, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Header(usize),
    Batch(usize),
    EndOfFrame(u32),
    EndOfTrace(usize),
}

#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub batches: Vec<Batch>,
    pub headers: Vec<HeaderLine>,
    pub ends: Vec<EndOfTrace>,
    pub items: Vec<Item>,
}

impl Trace {
    /// Field `key` of device `device`'s header, from whichever of its lines holds it.
    pub fn header(&self, device: u32, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .filter(|h| h.device == device)
            .flat_map(|h| &h.fields)
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

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
        } else if let Some(rest) = line.strip_prefix("TRACE ") {
            let (section, args) = rest
                .split_once(": ")
                .ok_or_else(|| err("bad TRACE line".into()))?;
            if !HEADER_SECTIONS.contains(&section) {
                return Err(err(format!("unknown TRACE section {section:?}")));
            }
            let mut fields = parse_args(args).map_err(err)?;
            if fields.first().map(|(k, _)| k.as_str()) != Some("device") {
                return Err(err("a TRACE line starts with device=".into()));
            }
            let device = fields
                .remove(0)
                .1
                .parse()
                .map_err(|_| err("bad TRACE device".into()))?;
            trace.items.push(Item::Header(trace.headers.len()));
            trace.headers.push(HeaderLine {
                device,
                section: section.to_string(),
                fields,
            });
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
mod tests;
