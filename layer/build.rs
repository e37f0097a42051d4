//! Generates the tracepoints from `tracepoints/tracepoints.toml` into `$OUT_DIR`. A mistake in
//! the spec fails the build here, listing every problem with its line and tracepoint.

use std::path::PathBuf;

fn main() {
    // The layer stays resident once loaded. Its process-wide state (device numbers, one
    // writer per output path, the exit handler registered with atexit) must outlive a
    // loader that unloads it between two instances, as Zink's probing does; without this
    // a later instance would number its device 0 again and truncate the trace file, and
    // the exit handler would point into unmapped code.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    let spec_path = utrace_tracepoints::SPEC_PATH;
    println!("cargo:rerun-if-changed={spec_path}");
    let text = std::fs::read_to_string(spec_path)
        .unwrap_or_else(|e| panic!("cannot read the tracepoint spec {spec_path}: {e}"));
    // Named from the workspace root in the banner and in errors, so that the generated
    // code does not depend on where the checkout is.
    let code = match utrace_tracepoints::generate(&text, "tracepoints/tracepoints.toml") {
        Ok(code) => code,
        Err(errors) => {
            for e in &errors {
                println!("cargo:warning={e}");
            }
            panic!(
                "the tracepoint spec has {} problem(s):\n{}",
                errors.len(),
                errors.join("\n")
            );
        }
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("tracepoints.rs");
    // Written only when changed, so an unchanged spec does not rebuild the layer.
    if std::fs::read_to_string(&out).ok().as_deref() != Some(code.as_str()) {
        std::fs::write(&out, code)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
    }
}
