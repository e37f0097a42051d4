//! Reading and checking `tracepoints.toml`. Every mistake is reported with the line of the
//! tracepoint it concerns and what is wrong; all of them at once, so one build shows them all.

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use toml::Spanned;

use crate::types::{self, ArgType};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    #[serde(default)]
    tracepoint: Vec<RawTracepoint>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTracepoint {
    name: Spanned<String>,
    doc: Option<String>,
    kind: String,
    range: Option<String>,
    end_of_pipe: Option<bool>,
    default: Option<bool>,
    stage: Option<String>,
    category: Option<String>,
    #[serde(default)]
    args: Vec<RawArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArg {
    name: String,
    #[serde(rename = "type")]
    ty: String,
}

/// A tracepoint's range kind and stage category: the format crate's, which the generated
/// code, the layer and the command name too.
pub use utrace_format::{Category, RangeKind};

#[derive(Debug)]
pub struct Arg {
    pub name: String,
    pub ty: &'static ArgType,
}

#[derive(Debug)]
pub struct Tracepoint {
    pub name: String,
    pub doc: String,
    pub kind: RangeKind,
    /// The range a begin/end belongs to; a marker's own name.
    pub range: String,
    pub end_of_pipe: bool,
    pub stage: Option<String>,
    pub category: Option<Category>,
    pub args: Vec<Arg>,
    /// Index into [`Spec::toggles`].
    pub toggle: usize,
}

/// What `GPU_TRACEPOINTS` switches: a range (both its ends) or a marker.
#[derive(Debug)]
pub struct Toggle {
    pub name: String,
    pub default: bool,
}

#[derive(Debug)]
pub struct Spec {
    pub tracepoints: Vec<Tracepoint>,
    pub toggles: Vec<Toggle>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Rust keywords an argument cannot be named (it becomes a field and a parameter).
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "rec", "trace",
];

/// Parses and checks a spec; `file` names it in messages.
pub fn parse(text: &str, file: &str) -> Result<Spec, Vec<String>> {
    let raw: RawSpec = toml::from_str(text).map_err(|e| vec![format!("{file}: {e}")])?;
    let mut errors = Vec::new();
    let mut tracepoints = Vec::new();
    let mut names = HashSet::new();
    // Per range: (begin line, end line, defaults seen).
    let mut ranges: BTreeMap<String, (Option<usize>, Option<usize>)> = BTreeMap::new();
    let mut toggles: Vec<Toggle> = Vec::new();

    for rt in raw.tracepoint {
        let line = line_of(text, rt.name.span().start);
        let name = rt.name.get_ref().clone();
        let mut err =
            |msg: String| errors.push(format!("{file}:{line}: tracepoint `{name}`: {msg}"));
        if !is_identifier(&name) {
            err(
                "the name must be lowercase letters, digits and `_`, starting with a letter".into(),
            );
        }
        if !names.insert(name.clone()) {
            err("declared twice".into());
        }
        let kind = match rt.kind.as_str() {
            "begin" => RangeKind::Begin,
            "end" => RangeKind::End,
            "marker" => RangeKind::Marker,
            other => {
                err(format!("kind `{other}` is not one of begin, end, marker"));
                continue;
            }
        };
        let range = match (kind, rt.range) {
            (RangeKind::Marker, None) => name.clone(),
            (RangeKind::Marker, Some(_)) => {
                err("a marker has no range".into());
                name.clone()
            }
            (_, Some(r)) if is_identifier(&r) => r,
            (_, Some(r)) => {
                err(format!("range `{r}` is not a valid name"));
                r
            }
            (_, None) => {
                err("a begin or end needs `range`".into());
                name.clone()
            }
        };
        let category = match rt.category.as_deref() {
            None => None,
            Some("graphics") => Some(Category::Graphics),
            Some("compute") => Some(Category::Compute),
            Some("transfer") => Some(Category::Transfer),
            Some("other") => Some(Category::Other),
            Some(other) => {
                err(format!(
                    "category `{other}` is not one of graphics, compute, transfer, other"
                ));
                None
            }
        };
        match kind {
            RangeKind::Begin | RangeKind::Marker => {
                if rt.stage.is_none() {
                    err("a begin or marker needs `stage` (its Perfetto stage name)".into());
                }
                if rt.category.is_none() {
                    err("a begin or marker needs `category`".into());
                }
            }
            RangeKind::End => {
                if rt.stage.is_some() || rt.category.is_some() {
                    err("`stage` and `category` belong on the range's begin, not its end".into());
                }
                if rt.default.is_some() {
                    err(
                        "`default` belongs on the range's begin (both ends share one switch)"
                            .into(),
                    );
                }
            }
        }
        if rt.doc.as_deref().is_none_or(|d| d.trim().is_empty()) {
            err("`doc` is missing: say what the tracepoint marks".into());
        }
        let mut args = Vec::new();
        let mut arg_names = HashSet::new();
        for a in rt.args {
            if !is_identifier(&a.name) || KEYWORDS.contains(&a.name.as_str()) {
                err(format!("argument `{}` is not a usable name", a.name));
            }
            if !arg_names.insert(a.name.clone()) {
                err(format!("argument `{}` declared twice", a.name));
            }
            match types::lookup(&a.ty) {
                Some(ty) => args.push(Arg { name: a.name, ty }),
                None => err(format!(
                    "argument `{}` has unknown type `{}` (known: {})",
                    a.name,
                    a.ty,
                    types::names()
                )),
            }
        }
        let entry = ranges.entry(range.clone()).or_default();
        match kind {
            RangeKind::Begin if entry.0.is_some() => {
                err(format!("range `{range}` has a second begin"))
            }
            RangeKind::End if entry.1.is_some() => err(format!("range `{range}` has a second end")),
            RangeKind::Begin => entry.0 = Some(line),
            RangeKind::End => entry.1 = Some(line),
            RangeKind::Marker => {
                if entry.0.is_some() || entry.1.is_some() {
                    err(format!("marker `{range}` has the name of a range"));
                }
                entry.0 = Some(line);
                entry.1 = Some(line);
            }
        }
        let toggle = match toggles.iter().position(|t| t.name == range) {
            Some(i) => {
                if let Some(d) = rt.default {
                    toggles[i].default = d;
                }
                i
            }
            None => {
                toggles.push(Toggle {
                    name: range.clone(),
                    default: rt.default.unwrap_or(true),
                });
                toggles.len() - 1
            }
        };
        tracepoints.push(Tracepoint {
            name,
            doc: rt.doc.unwrap_or_default(),
            kind,
            range,
            end_of_pipe: rt.end_of_pipe.unwrap_or(kind != RangeKind::Begin),
            stage: rt.stage,
            category,
            args,
            toggle,
        });
    }
    for (range, (begin, end)) in &ranges {
        match (begin, end) {
            (None, Some(line)) => errors.push(format!(
                "{file}:{line}: range `{range}` has an end but no begin"
            )),
            (Some(line), None) => errors.push(format!(
                "{file}:{line}: range `{range}` has a begin but no end"
            )),
            _ => {}
        }
    }
    if errors.is_empty() {
        Ok(Spec {
            tracepoints,
            toggles,
        })
    } else {
        Err(errors)
    }
}
