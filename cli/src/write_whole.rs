//! Writes a file whole: into a temporary file beside it, then renamed over it, so that
//! nothing ever reads half of it (a loader a half-copied library, a user a torn trace) and a
//! failed write leaves whatever was there before.

use std::path::Path;

pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".utrace-partial");
    let tmp = path.with_file_name(name);
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("{}: {e}", path.display())
        })
}
