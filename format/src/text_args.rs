//! Arguments in the txt form (`name=value, ...`, as the layer's txt and csv formats write
//! them; a label quoted, with `"`, `\` and control characters escaped) to and from the
//! name/value pairs of Perfetto's `extra_data`, which hold a label as it is.

use crate::escape::push_quoted;
use crate::ValueKind;

/// `pairs` in the txt form; the arguments of kind `Quoted` in `kinds` (labels) quoted and
/// escaped as the layer's txt printer does ([`push_quoted`]).
pub fn format(pairs: &[(String, String)], kinds: &[(String, ValueKind)]) -> String {
    let mut out = String::new();
    for (name, value) in pairs {
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(name);
        out.push('=');
        let quoted = kinds
            .iter()
            .any(|(n, kind)| n == name && *kind == ValueKind::Quoted);
        if quoted {
            push_quoted(&mut out, value.as_bytes());
        } else {
            out.push_str(value);
        }
    }
    out
}

/// The pairs of a txt argument list, quoted values unquoted. A value runs to the next
/// `, name=` (a text value may hold commas).
pub fn parse(text: &str) -> Vec<(String, String)> {
    split(text)
        .into_iter()
        .map(|(name, raw)| {
            let value = match raw.strip_prefix('"').and_then(unquote) {
                Some((value, "")) => value,
                _ => raw.to_string(),
            };
            (name.to_string(), value)
        })
        .collect()
}

/// The pairs of a txt argument list as written: a quoted value with its quotes and escapes
/// (which are JSON's: the layer's json writes such a value as it is), so that a converter
/// can tell a label `"7"` from the number 7.
pub fn split(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some((name, after)) = rest.split_once('=') {
        let end = match after.strip_prefix('"').and_then(unquote) {
            Some((_, next)) => after.len() - next.len(),
            None => next_arg(after).unwrap_or(after.len()),
        };
        let (raw, next) = after.split_at(end);
        out.push((name.trim(), raw));
        rest = next.strip_prefix(", ").unwrap_or(next);
    }
    out
}

/// A handle or number argument's value (`0x...` or decimal).
pub fn handle(value: &str) -> Option<u64> {
    match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => value.parse().ok(),
    }
}

/// Where the next `, name=` of `text` starts.
fn next_arg(text: &str) -> Option<usize> {
    text.match_indices(", ").map(|(at, _)| at).find(|&at| {
        let after = &text[at + 2..];
        after.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
    })
}

/// The text of a quoted value (after its opening quote) up to its closing quote, and what
/// follows; `None` when it is not closed.
fn unquote(text: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Some((out, &text[at + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                'u' => {
                    let hex: String = (0..4).filter_map(|_| chars.next().map(|c| c.1)).collect();
                    let c = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                    out.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn labels_are_quoted_and_escaped_both_ways() {
        let kinds = vec![
            ("label".to_string(), ValueKind::Quoted),
            ("n".to_string(), ValueKind::Number),
        ];
        let p = pairs(&[("label", "say \"a, b=c\"\\\n\u{1}"), ("n", "3")]);
        let text = format(&p, &kinds);
        assert_eq!(text, r#"label="say \"a, b=c\"\\\n\u0001", n=3"#);
        assert_eq!(parse(&text), p);
        assert_eq!(
            split(&text),
            [("label", r#""say \"a, b=c\"\\\n\u0001""#), ("n", "3")]
        );
    }

    #[test]
    fn text_values_may_hold_commas() {
        let text = "op=reset, pool, x=1, name=a, b";
        assert_eq!(
            parse(text),
            pairs(&[("op", "reset, pool"), ("x", "1"), ("name", "a, b")])
        );
        assert!(parse("").is_empty());
        // An unclosed quote is kept as it is.
        assert_eq!(parse("label=\"ab"), pairs(&[("label", "\"ab")]));
    }
}
