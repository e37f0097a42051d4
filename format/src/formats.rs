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

    /// The format a trace file's name says: Perfetto's tools' names (`.pftrace`,
    /// `.perfetto-trace`), `.json`/`.jsonl` and `.csv`; `None` for any other name (txt). The
    /// layer's `GPU_TRACEFILE` and `utrace run --out` follow it.
    pub fn of_name(path: &str) -> Option<Format> {
        let lower = path.to_ascii_lowercase();
        let ends = |suffixes: &[&str]| suffixes.iter().any(|s| lower.ends_with(s));
        if ends(&[".pftrace", ".perfetto-trace"]) {
            Some(Format::Perfetto)
        } else if ends(&[".json", ".jsonl"]) {
            Some(Format::Json)
        } else if ends(&[".csv"]) {
            Some(Format::Csv)
        } else {
            None
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

/// The csv header of a trace with GPU counters (`GPU_TRACE_COUNTERS=pipeline`): after
/// `args`, a column per statistic (`crate::COUNTER_NAMES`) and `partial`, empty where an
/// event has none.
pub const CSV_HEADER_COUNTERS: &str = "device,batch,frame,submission,thread,submitted,ns,delta,depth,event,args,input_vertices,input_primitives,vertex_invocations,clipping_invocations,clipping_primitives,fragment_invocations,compute_invocations,task_invocations,mesh_invocations,partial\n";

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn the_counters_header_is_the_plain_one_then_a_column_per_statistic() {
        let plain = super::CSV_HEADER.trim_end();
        let extra: Vec<&str> = crate::COUNTER_NAMES
            .iter()
            .copied()
            .chain(["partial"])
            .collect();
        assert_eq!(
            super::CSV_HEADER_COUNTERS.trim_end(),
            format!("{plain},{}", extra.join(","))
        );
    }

    #[test]
    fn names_round_trip() {
        for f in [Format::Txt, Format::Json, Format::Csv, Format::Perfetto] {
            assert_eq!(Format::parse(f.name()), Some(f));
        }
        assert_eq!(Format::parse("xml"), None);
    }

    #[test]
    fn a_files_name_says_its_format() {
        assert_eq!(Format::of_name("/t/gpu.pftrace"), Some(Format::Perfetto));
        assert_eq!(
            Format::of_name("GPU.PERFETTO-TRACE"),
            Some(Format::Perfetto)
        );
        assert_eq!(Format::of_name("a.jsonl"), Some(Format::Json));
        assert_eq!(Format::of_name("a.csv"), Some(Format::Csv));
        assert_eq!(Format::of_name("a.txt"), None);
        assert_eq!(Format::of_name("pftrace"), None);
    }
}
