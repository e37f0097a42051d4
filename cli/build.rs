//! UTRACE_VERSION for `utrace --version`: the package's version and the commit built, the
//! string the layer reports too (see the `utrace-version` crate).

fn main() {
    utrace_version::emit();
}
