//! The control socket's requests: one line each (see the module `control`).

use crate::config::Format;

#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    /// `status`
    Status,
    /// `capture frames=N format=F path=PATH` (the path is the rest of the line)
    Capture {
        frames: u32,
        format: Format,
        path: String,
    },
    /// `stop`
    Stop,
    /// `watch`: a line a second of what was traced, until the client leaves
    Watch,
}

/// The longest request taken: a line with a path.
pub const MAX_LINE: usize = 4096;

pub fn parse(line: &str) -> Result<Request, String> {
    let line = line.trim_end_matches(['\n', '\r']);
    match line {
        "status" => return Ok(Request::Status),
        "stop" => return Ok(Request::Stop),
        "watch" => return Ok(Request::Watch),
        _ => {}
    }
    let Some(rest) = line.strip_prefix("capture ") else {
        return Err(format!(
            "unknown request {:?} (status, stop, watch, capture frames=N format=F path=PATH)",
            line.chars().take(40).collect::<String>()
        ));
    };
    let (fields, path) = rest
        .split_once("path=")
        .ok_or("a capture needs path=PATH (last)")?;
    let (mut frames, mut format) = (None, Format::Txt);
    for field in fields.split_whitespace() {
        match field.split_once('=') {
            Some(("frames", n)) => {
                frames = Some(
                    n.parse::<u32>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| format!("frames={n:?} is not a number of frames"))?,
                )
            }
            Some(("format", "txt")) => format = Format::Txt,
            Some(("format", "json")) => format = Format::Json,
            Some(("format", "csv")) => format = Format::Csv,
            Some(("format", f)) => return Err(format!("format={f:?} is not txt, json or csv")),
            _ => return Err(format!("{field:?} is not frames=N or format=F")),
        }
    }
    let frames = frames.ok_or("a capture needs frames=N")?;
    if !path.starts_with('/') {
        return Err(format!("path={path:?} is not absolute"));
    }
    Ok(Request::Capture {
        frames,
        format,
        path: path.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_garbage() {
        assert_eq!(parse("status\n"), Ok(Request::Status));
        assert_eq!(parse("stop"), Ok(Request::Stop));
        assert_eq!(parse("watch\n"), Ok(Request::Watch));
        assert_eq!(
            parse("capture frames=5 format=json path=/tmp/a b.json\n"),
            Ok(Request::Capture {
                frames: 5,
                format: Format::Json,
                path: "/tmp/a b.json".into()
            })
        );
        for bad in [
            "",
            "\u{0}\u{1}garbage",
            "capture",
            "watch frames=3",
            "capture frames=0 path=/x",
            "capture frames=x path=/x",
            "capture frames=3 format=perfetto path=/x",
            "capture frames=3 path=relative",
            "capture format=txt path=/x",
            "capture frames=3 colour=red path=/x",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
