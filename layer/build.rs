//! Generates the tracepoints from `tracepoints/tracepoints.toml`, and the intercepted
//! commands' tables from `src/hooks/intercepts.txt` and the Vulkan registry, into `$OUT_DIR`.
//! A mistake in either fails the build here, listing every problem with its line.

use std::path::PathBuf;

fn main() {
    // The layer stays resident once loaded. Its process-wide state (device numbers, one
    // writer per output path, the exit handler registered with atexit) must outlive a
    // loader that unloads it between two instances, as Zink's probing does; without this
    // a later instance would number its device 0 again and truncate the trace file, and
    // the exit handler would point into unmapped code.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    // UTRACE_VERSION: the package's version and the commit built, as `utrace --version`.
    utrace_version::emit();
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
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    write_if_changed(&out_dir.join("tracepoints.rs"), &code);

    let list_path = "src/hooks/intercepts.txt";
    println!("cargo:rerun-if-changed={list_path}");
    let list = std::fs::read_to_string(list_path).unwrap_or_else(|e| {
        panic!("cannot read the list of intercepted commands {list_path}: {e}")
    });
    let (aliases, intercepts) = match utrace_tracepoints::commands::generate(&list) {
        Ok(code) => code,
        Err(errors) => {
            for e in &errors {
                println!("cargo:warning=layer/{list_path}: {e}");
            }
            panic!(
                "layer/{list_path} has {} problem(s):\n{}",
                errors.len(),
                errors.join("\n")
            );
        }
    };
    write_if_changed(&out_dir.join("command_aliases.rs"), &aliases);
    write_if_changed(&out_dir.join("intercepts.rs"), &intercepts);
}

/// Written only when changed, so an unchanged input does not rebuild the layer.
fn write_if_changed(out: &std::path::Path, code: &str) {
    if std::fs::read_to_string(out).ok().as_deref() != Some(code) {
        std::fs::write(out, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
    }
}
