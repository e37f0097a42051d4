//! The json format (the layer's `sink/json.rs`): JSON Lines, `batch` lines holding their
//! events, `end_of_frame` and `end_of_trace` lines between them.

use serde_json::Value;

use super::{number, origin, submit_times, Batch, Event, Trace};

/// A `{"type":"trace",...}` line: its device's header, every value as text.
fn header(trace: &mut Trace, v: &Value) {
    let (Some(object), Some(device)) = (v.as_object(), v["device"].as_u64()) else {
        return;
    };
    let pairs = object
        .iter()
        .filter(|(k, _)| *k != "type" && *k != "device")
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), text)
        })
        .collect();
    if let Ok(device) = u32::try_from(device) {
        origin::merge(&mut trace.origins, device, pairs);
    }
}

pub fn parse(text: &str) -> Result<Trace, String> {
    let mut trace = Trace::default();
    for (i, line) in text.lines().enumerate() {
        let at = i + 1;
        if line.is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            trace
                .notes
                .push(format!("line {at}: not JSON (cut short?); skipped"));
            continue;
        };
        if v["type"] == utrace_format::header::TRACE_KIND {
            header(&mut trace, &v);
            continue;
        }
        if v["type"] != "batch" {
            continue;
        }
        match batch(&v) {
            Some(mut b) => {
                // As written (a string keeps its quotes, so it is said not to be a time).
                let raw = v.get("submitted_ns").map(Value::to_string);
                match submit_times::parse(raw.as_deref()) {
                    Ok(submitted) => b.submit_ns = submitted,
                    Err(e) => trace.notes.push(format!("line {at}: {e}")),
                }
                trace.batches.push(b)
            }
            None => trace
                .notes
                .push(format!("line {at}: a malformed batch; skipped")),
        }
    }
    Ok(trace)
}

fn batch(v: &Value) -> Option<Batch> {
    let events = v["events"]
        .as_array()?
        .iter()
        .map(|e| {
            Some(Event {
                ns: e["ns"].as_u64()?,
                name: e["name"].as_str()?.to_string(),
                args: args(e["args"].as_object()?),
            })
        })
        .collect::<Option<Vec<Event>>>()?;
    Some(Batch {
        device: u32::try_from(v["device"].as_u64()?).ok()?,
        number: v["batch"].as_u64()?,
        queue: v["queue"].as_str().and_then(number),
        frame: v["frame"].as_u64()?,
        submission: v["submission"].as_u64()?,
        thread: v["thread"].as_u64(),
        // Read by the caller, which can say what is wrong with it.
        submit_ns: None,
        events,
    })
}

/// The arguments as the txt format writes them: `name=value, ...`, strings as they are.
fn args(map: &serde_json::Map<String, Value>) -> String {
    let mut out = String::new();
    for (k, v) in map {
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(k);
        out.push('=');
        match v {
            Value::String(s) => out.push_str(s),
            other => out.push_str(&other.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_lines_make_batches() {
        let text = "{\"type\":\"batch\",\"device\":0,\"batch\":1,\"queue\":\"0x10\",\"frame\":2,\"submission\":5,\"cmdbufs\":1,\"queries\":2,\"elapsed_ns\":5,\"events\":[{\"ns\":10,\"delta\":0,\"depth\":0,\"name\":\"begin_label\",\"args\":{\"label\":\"x\"}},{\"ns\":15,\"delta\":5,\"depth\":0,\"name\":\"end_label\",\"args\":{}}]}\n\
                    {\"type\":\"end_of_frame\",\"device\":0,\"frame\":2}\n\
                    {\"type\":\"batch\",\"dev";
        let t = parse(text).unwrap();
        assert_eq!(t.batches.len(), 1);
        let b = &t.batches[0];
        assert_eq!((b.queue, b.frame, b.events.len()), (Some(16), 2, 2));
        assert_eq!(b.events[0].args, "label=x");
        assert_eq!(t.notes.len(), 1, "the cut line is noted");
    }

    #[test]
    fn arguments_keep_the_order_the_layer_wrote_them_in() {
        let text = "{\"type\":\"batch\",\"device\":0,\"batch\":1,\"queue\":\"0x10\",\"frame\":0,\"submission\":1,\"cmdbufs\":1,\"queries\":2,\"elapsed_ns\":5,\"events\":[{\"ns\":10,\"delta\":0,\"depth\":0,\"name\":\"start_cmd_buffer\",\"args\":{\"cmd\":\"0x1\",\"level\":\"primary\",\"usage\":\"none\",\"thread\":7}}]}\n";
        let t = parse(text).unwrap();
        assert_eq!(
            t.batches[0].events[0].args,
            "cmd=0x1, level=primary, usage=none, thread=7"
        );
    }
}
