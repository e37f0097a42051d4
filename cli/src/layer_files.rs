//! The layer's files as `utrace run` and `utrace install` find and place them: the library
//! built beside this binary (`cargo build --release` puts both in `target/release/`), and
//! the repository's manifests with their `library_path` pointed at it.

use std::path::{Path, PathBuf};

/// The library's file name.
pub const LIBRARY: &str = "libVkLayer_utrace.so";

/// The manifests of the repository, and the `library_path` they are written with.
const EXPLICIT: &str = include_str!("../../manifest/VkLayer_utrace.json");
const IMPLICIT: &str = include_str!("../../manifest/VkLayer_utrace_implicit.json");
const REPOSITORY_PATH: &str = "../target/release/libVkLayer_utrace.so";

/// The layer library next to this executable, if there is one.
pub fn library_beside_exe() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let lib = exe.parent()?.join(LIBRARY);
    lib.is_file().then_some(lib)
}

/// The explicit (or implicit) manifest, loading the library at `library`.
pub fn manifest(implicit: bool, library: &Path) -> String {
    let text = if implicit { IMPLICIT } else { EXPLICIT };
    // JSON string: the path's backslashes and quotes escaped.
    let path = serde_json::to_string(&library.display().to_string())
        .unwrap_or_else(|_| unreachable!("a string serialises"));
    text.replace(&format!("\"{REPOSITORY_PATH}\""), &path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_point_at_the_library_given() {
        for implicit in [false, true] {
            let text = manifest(implicit, Path::new("/opt/x \"y\"/libVkLayer_utrace.so"));
            let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            assert_eq!(
                v["layer"]["library_path"],
                "/opt/x \"y\"/libVkLayer_utrace.so"
            );
            assert_eq!(v["layer"]["name"], "VK_LAYER_utrace");
            assert_eq!(v["layer"].get("enable_environment").is_some(), implicit);
        }
    }
}
