//! What ranges are grouped by: the key of a range under each `--by` (shared by `report`
//! and `diff`).

use crate::ranges::Range;

/// What ranges are grouped by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// The range's kind: `cmd_buffer`, `render_pass`, `draw`, `label`, ...; every range of
    /// the trace is counted once.
    Tracepoint,
    /// The application's debug label (label ranges only).
    Label,
}

impl By {
    /// The heading of the key column.
    pub fn heading(self) -> &'static str {
        match self {
            By::Tracepoint => "range",
            By::Label => "label",
        }
    }
}

/// The key of `r` under `by`; `None` when the range is not in any group of it.
pub fn key(r: &Range<'_>, by: By) -> Option<String> {
    match by {
        By::Tracepoint => Some(r.range.to_string()),
        By::Label if r.range == "label" => label(r),
        By::Label => None,
    }
}

/// The label of a label range: its `label` argument, unquoted.
fn label(r: &Range<'_>) -> Option<String> {
    let value = r.args.strip_prefix("label=")?;
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    Some(value.to_string())
}
