//! The tracepoint spec this build of utrace was made with (the layer's
//! `tracepoints/tracepoints.toml`), embedded once, and what the command reads from it: the
//! range each tracepoint begins or ends ([`crate::analysis::ranges::Spec`]) and the Perfetto
//! stages ([`StageSpec`]).

mod stages;

pub use stages::{StageSpec, Tracepoint};
use utrace_tracepoints::spec;

/// The spec's text, as the layer was built with it.
const TEXT: &str = include_str!("../../../tracepoints/tracepoints.toml");

/// The built-in spec, parsed.
pub fn built_in() -> spec::Spec {
    spec::parse(TEXT, "tracepoints.toml")
        .unwrap_or_else(|e| unreachable!("the layer builds with this spec: {e:?}"))
}
