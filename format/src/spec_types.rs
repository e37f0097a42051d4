//! The tracepoint spec's kinds that the generated code, the layer's writers and the
//! command's readers all name (`tracepoints/tracepoints.toml` declares them per tracepoint).

/// Whether a tracepoint opens a range, closes one, or marks a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeKind {
    Begin,
    End,
    Marker,
}

/// The kind of GPU work a range is, for Perfetto's stage categories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    Graphics,
    Compute,
    Transfer,
    Other,
}

/// How an argument appears in structured output (JSON, CSV, Perfetto `extra_data`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// A number, written bare in JSON.
    Number,
    /// `true` / `false`, bare in JSON.
    Bool,
    /// Text, quoted (and escaped) in JSON.
    Text,
    /// Printed already quoted and escaped (labels), valid as a JSON string as it is.
    Quoted,
}
