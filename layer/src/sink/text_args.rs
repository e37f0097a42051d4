//! An event's arguments as the txt and csv formats write them: `name=value, ...`, and a
//! draw's or dispatch's pipeline followed by the name the application gave it.

use utrace_format::escape::push_quoted;

use super::{BatchInfo, Event};

pub fn write(out: &mut String, info: &BatchInfo, e: &Event<'_>) {
    let payload = e.payload();
    payload.write_args(out, e.strings);
    if let Some(name) = payload.pipeline().and_then(|p| info.pipeline_name(p)) {
        out.push_str(", pipeline_name=");
        push_quoted(out, name.as_bytes());
    }
}
