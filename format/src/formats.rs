//! The formats a trace is written in, by the layer (`GPU_TRACE_FORMAT`) and read by the
//! command.

/// Output format of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Txt,
    /// JSON Lines: one object per batch, frame end and trace end.
    Json,
    Csv,
    /// GPU render stages in a Perfetto trace (an in-process session written to a file).
    Perfetto,
}

impl Format {
    /// The format `GPU_TRACE_FORMAT` names `name` (lower case), if any.
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "txt" => Some(Format::Txt),
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "perfetto" => Some(Format::Perfetto),
            _ => None,
        }
    }

    /// The name `GPU_TRACE_FORMAT` uses for it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Perfetto => "perfetto",
        }
    }
}

/// The csv format's header line: the columns of every row (an `end_of_trace` row leaves
/// the batch's empty).
pub const CSV_HEADER: &str =
    "device,batch,frame,submission,thread,submitted,ns,delta,depth,event,args\n";

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn names_round_trip() {
        for f in [Format::Txt, Format::Json, Format::Csv, Format::Perfetto] {
            assert_eq!(Format::parse(f.name()), Some(f));
        }
        assert_eq!(Format::parse("xml"), None);
    }
}
