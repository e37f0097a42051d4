//! The tracepoint spec of utrace and its generator.
//!
//! `tracepoints.toml` (next to this crate's manifest) declares every tracepoint once; the
//! layer's build script calls [`generate`] and includes the result. Generation is pure (text
//! in, Rust out) so that it is tested here, bad specs included. A bad spec fails the build
//! with every problem listed, each naming the file, the line and the tracepoint.

pub mod commands;
mod emit;
pub mod spec;
pub mod types;

/// The spec's path, for build scripts.
pub const SPEC_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tracepoints.toml");

/// Generates the Rust code for `spec_text` or returns every problem found.
pub fn generate(spec_text: &str, file: &str) -> Result<String, Vec<String>> {
    let spec = spec::parse(spec_text, file)?;
    Ok(emit::emit(&spec, file))
}

#[cfg(test)]
mod tests;
