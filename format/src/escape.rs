//! How text is quoted in the trace's text formats:
//! - [`push_json_string`]: the json format's strings (argument values, object names);
//! - [`push_csv_field`]: the csv format's quoted field (an event's arguments);
//! - [`push_quoted`]: labels (and object names) as the txt and csv formats print them,
//!   which the json format then writes as they are; it also escapes DEL and takes bytes
//!   that may not be UTF-8.
//!
//! Both write into the caller's buffer without allocating: the layer's writers call them for
//! every text argument of every event. `#[inline]` so that they inline across the crate
//! boundary as they did inside the layer.

use std::fmt::Write;

/// Appends `text` as a JSON string: `"` and `\` escaped, `\n` as `\n`, other control
/// characters as `\uXXXX`.
#[inline]
pub fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `text` quoted as a label: `"` and `\` escaped, `\n` as `\n`, other control
/// characters and DEL as `\uXXXX` (so that the printed label is also a valid JSON string);
/// bytes that are not UTF-8 become U+FFFD.
#[inline]
pub fn push_quoted(out: &mut String, text: &[u8]) {
    out.push('"');
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
        if !chunk.invalid().is_empty() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
    out.push('"');
}

/// Appends `text` as a csv field: quoted, a quote inside doubled (RFC 4180).
#[inline]
pub fn push_csv_field(out: &mut String, text: &str) {
    out.push('"');
    for (i, piece) in text.split('"').enumerate() {
        if i > 0 {
            out.push_str("\"\"");
        }
        out.push_str(piece);
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_escape_quotes_backslashes_and_controls() {
        let mut out = String::new();
        push_json_string(&mut out, "a \"b\" \\ \n\u{1}\u{7f}é");
        assert_eq!(out, "\"a \\\"b\\\" \\\\ \\n\\u0001\u{7f}é\"");
    }

    #[test]
    fn csv_fields_double_their_quotes() {
        let mut out = String::new();
        push_csv_field(&mut out, "label=\"a, b\"");
        assert_eq!(out, "\"label=\"\"a, b\"\"\"");
    }

    #[test]
    fn labels_also_escape_del_and_replace_bad_bytes() {
        let mut out = String::new();
        push_quoted(&mut out, b"say \"hi\"\\\n\x01\x7f\xff!");
        assert_eq!(out, "\"say \\\"hi\\\"\\\\\\n\\u0001\\u007f\u{fffd}!\"");
    }
}
