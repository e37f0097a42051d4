//! The header that says where a device's part of a trace comes from: the build, the
//! process, the device and its driver, the application, the settings in effect. The layer
//! writes it before the device's first record; readers keep it, and a comparison of traces
//! refuses those whose headers disagree on what changes the timing.
//!
//! - txt: a line per section, `TRACE DEVICE: device=0, device_name="llvmpipe", ...`;
//! - json: a first line `{"type":"trace","device":0,"utrace":"...",...}`;
//! - csv: a row of kind `trace` whose `args` hold every field, as the txt lines do.

use crate::escape::{push_csv_field, push_json_string, push_quoted};

/// The csv row kind and the json `type` of a header.
pub const TRACE_KIND: &str = "trace";
/// The txt lines' start: `TRACE <SECTION>: `.
pub const TXT_PREFIX: &str = "TRACE ";

/// The sections and their keys, in the order written. Keys are unique across sections,
/// so that json and csv write them flat.
pub const SECTIONS: [(&str, &[&str]); 4] = [
    ("ORIGIN", &["utrace", "process", "pid", "host", "started"]),
    (
        "DEVICE",
        &[
            "device_name",
            "vendor_id",
            "device_id",
            "driver_name",
            "driver_info",
            "driver_version",
            "api_version",
            "timestamp_period",
            "valid_bits",
            "clock",
        ],
    ),
    (
        "APPLICATION",
        &["app_name", "app_version", "engine_name", "engine_version"],
    ),
    (
        "SETTINGS",
        &["format", "tracepoints", "counters", "frames", "instrument"],
    ),
];

/// The keys whose values change what a trace times or how long it takes: the device, its
/// driver, and the settings that choose what is timed. Traces that differ in one of these
/// are not comparable as they are; the output's path, its format, the process and the
/// time are not among them.
pub const TIMING_KEYS: &[&str] = &[
    "device_name",
    "vendor_id",
    "device_id",
    "driver_name",
    "driver_info",
    "driver_version",
    "tracepoints",
    "counters",
    "frames",
];

/// The keys whose values are numbers (the rest are text), hexadecimal ids, and the one
/// fraction: what a reader that kept every value as text needs to write them again.
const NUMBER_KEYS: [&str; 4] = ["pid", "app_version", "engine_version", "instrument"];
const HEX_KEYS: [&str; 2] = ["vendor_id", "device_id"];
const FLOAT_KEYS: [&str; 1] = ["timestamp_period"];

/// `text`, read back from any format, as the value of `key` (text where it does not
/// parse as the number the key holds).
pub fn typed(key: &str, text: &str) -> Value {
    let number = || text.parse::<u64>().ok();
    let parsed = if NUMBER_KEYS.contains(&key) {
        number().map(Value::Number)
    } else if HEX_KEYS.contains(&key) {
        text.strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .map(Value::Hex)
    } else if FLOAT_KEYS.contains(&key) {
        text.parse::<f64>().ok().map(Value::Float)
    } else {
        None
    };
    parsed.unwrap_or_else(|| Value::Text(text.to_string()))
}

/// A header value: text is quoted (txt, csv) or a JSON string; a number is written bare.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Text(String),
    Number(u64),
    /// Written `0x...`: vendor and device ids.
    Hex(u64),
    Float(f64),
}

impl Value {
    /// As the txt form writes it, unquoted: what a reader of any format keeps.
    pub fn plain(&self) -> String {
        match self {
            Value::Text(t) => t.clone(),
            Value::Number(n) => n.to_string(),
            Value::Hex(n) => format!("{n:#x}"),
            Value::Float(f) => f.to_string(),
        }
    }

    fn push_txt(&self, out: &mut String) {
        match self {
            Value::Text(t) => push_quoted(out, t.as_bytes()),
            _ => out.push_str(&self.plain()),
        }
    }

    fn push_json(&self, out: &mut String) {
        match self {
            Value::Text(t) => push_json_string(out, t),
            Value::Hex(_) => push_json_string(out, &self.plain()),
            _ => out.push_str(&self.plain()),
        }
    }
}

/// One device's header: its fields by key, in [`SECTIONS`]' order (a key missing from
/// `fields` is left out).
pub struct Header<'a> {
    pub device: u32,
    pub fields: &'a [(&'a str, Value)],
}

impl Header<'_> {
    fn section<'k>(&'k self, keys: &'k [&str]) -> impl Iterator<Item = &'k (&'k str, Value)> {
        keys.iter()
            .filter_map(|key| self.fields.iter().find(|(k, _)| k == key))
    }

    /// `key=value, ...` of `keys`, as txt and csv write arguments.
    fn push_args<'b>(out: &mut String, fields: impl Iterator<Item = &'b (&'b str, Value)>) {
        for (key, value) in fields {
            out.push_str(", ");
            out.push_str(key);
            out.push('=');
            value.push_txt(out);
        }
    }

    /// The txt lines, each ending in a newline.
    pub fn push_txt(&self, out: &mut String) {
        for (section, keys) in SECTIONS {
            out.push_str(TXT_PREFIX);
            out.push_str(section);
            out.push_str(": device=");
            out.push_str(&self.device.to_string());
            Self::push_args(out, self.section(keys));
            out.push('\n');
        }
    }

    /// The csv row's `args` field content (not yet quoted as a csv field).
    pub fn csv_args(&self) -> String {
        let mut out = String::new();
        for (_, keys) in SECTIONS {
            Self::push_args(&mut out, self.section(keys));
        }
        out.trim_start_matches(", ").to_string()
    }

    /// The csv row, its batch columns empty, and `counters` counter columns and `partial`
    /// after `args` where the header has them.
    pub fn push_csv_row(&self, out: &mut String, counters: Option<usize>) {
        out.push_str(&self.device.to_string());
        out.push_str(",,,,,,,,,");
        out.push_str(TRACE_KIND);
        out.push(',');
        push_csv_field(out, &self.csv_args());
        for _ in 0..counters.map_or(0, |c| c + 1) {
            out.push(',');
        }
        out.push('\n');
    }

    /// The json line, ending in a newline.
    pub fn push_json(&self, out: &mut String) {
        out.push_str("{\"type\":\"");
        out.push_str(TRACE_KIND);
        out.push_str("\",\"device\":");
        out.push_str(&self.device.to_string());
        for (_, keys) in SECTIONS {
            for (key, value) in self.section(keys) {
                out.push_str(",\"");
                out.push_str(key);
                out.push_str("\":");
                value.push_json(out);
            }
        }
        out.push_str("}\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Vec<(&'static str, Value)> {
        vec![
            ("utrace", Value::Text("0.1.0 (commit 1a2b)".into())),
            ("pid", Value::Number(42)),
            ("vendor_id", Value::Hex(0x10005)),
            ("device_name", Value::Text("llvm \"pipe\"".into())),
            ("timestamp_period", Value::Float(83.333)),
            ("tracepoints", Value::Text("default".into())),
        ]
    }

    #[test]
    fn each_format_writes_every_field_in_section_order() {
        let fields = fields();
        let header = Header {
            device: 1,
            fields: &fields,
        };
        let mut txt = String::new();
        header.push_txt(&mut txt);
        assert_eq!(
            txt,
            "TRACE ORIGIN: device=1, utrace=\"0.1.0 (commit 1a2b)\", pid=42\n\
             TRACE DEVICE: device=1, device_name=\"llvm \\\"pipe\\\"\", vendor_id=0x10005, timestamp_period=83.333\n\
             TRACE APPLICATION: device=1\n\
             TRACE SETTINGS: device=1, tracepoints=\"default\"\n"
        );
        let mut json = String::new();
        header.push_json(&mut json);
        assert_eq!(
            json,
            "{\"type\":\"trace\",\"device\":1,\"utrace\":\"0.1.0 (commit 1a2b)\",\"pid\":42,\"device_name\":\"llvm \\\"pipe\\\"\",\"vendor_id\":\"0x10005\",\"timestamp_period\":83.333,\"tracepoints\":\"default\"}\n"
        );
        assert!(header
            .csv_args()
            .starts_with("utrace=\"0.1.0 (commit 1a2b)\", pid=42, device_name="));
    }

    #[test]
    fn keys_are_unique_and_timing_keys_are_among_them() {
        let all: Vec<&str> = SECTIONS
            .iter()
            .flat_map(|(_, k)| k.iter().copied())
            .collect();
        let mut sorted = all.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len());
        assert!(TIMING_KEYS.iter().all(|k| all.contains(k)));
    }
}
