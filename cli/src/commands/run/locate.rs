//! Where `utrace run` gets the layer from: the library beside this binary (a manifest for it
//! is written to a temporary folder and added with `VK_ADD_LAYER_PATH`), or else a manifest
//! the loader finds by itself (`utrace install`, a distribution's package).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::layer_files;

/// How the application's loader will find the layer.
pub enum Layer {
    /// A manifest written into this folder (removed when dropped); add it to
    /// `VK_ADD_LAYER_PATH`.
    Beside(TempFolder),
    /// Installed where the loader looks: nothing to add.
    Installed(PathBuf),
}

pub fn layer() -> Result<Layer, String> {
    if let Some(library) = layer_files::library_beside_exe() {
        let folder = TempFolder::new()?;
        let manifest = folder.0.join("VkLayer_utrace.json");
        std::fs::write(&manifest, layer_files::manifest(false, &library))
            .map_err(|e| format!("{}: {e}", manifest.display()))?;
        return Ok(Layer::Beside(folder));
    }
    match installed_manifest() {
        Some(found) => Ok(Layer::Installed(found)),
        None => Err(format!(
            "cannot find VK_LAYER_utrace: no {} beside this program and no VkLayer_utrace.json \
             in the Vulkan loader's layer folders (build it with `cargo build --release`, or \
             run `utrace install`)",
            layer_files::LIBRARY
        )),
    }
}

/// The explicit-layer folders the loader searches on Linux, in its order.
fn search_folders() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for var in ["VK_ADD_LAYER_PATH", "VK_LAYER_PATH"] {
        if let Some(paths) = std::env::var_os(var) {
            out.extend(std::env::split_paths(&paths));
        }
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".local/share")));
    let data_dirs = std::env::var_os("XDG_DATA_DIRS")
        .unwrap_or_else(|| OsString::from("/usr/local/share:/usr/share"));
    let config_dirs =
        std::env::var_os("XDG_CONFIG_DIRS").unwrap_or_else(|| OsString::from("/etc/xdg"));
    let roots = data_home
        .into_iter()
        .chain(std::env::split_paths(&config_dirs))
        .chain([PathBuf::from("/etc")])
        .chain(std::env::split_paths(&data_dirs));
    out.extend(roots.map(|r| r.join("vulkan/explicit_layer.d")));
    out
}

fn installed_manifest() -> Option<PathBuf> {
    search_folders()
        .into_iter()
        .map(|f| f.join("VkLayer_utrace.json"))
        .find(|m| m.is_file())
}

/// A folder of the process's own under the temporary directory, removed when dropped:
/// made afresh (never one that exists: another user could have made it, with files the
/// loader would read), of a name no one can guess, readable by this user only. (It was
/// `utrace-run-<pid>`, taken as found: issue 43.)
pub struct TempFolder(pub PathBuf);

impl TempFolder {
    fn new() -> Result<TempFolder, String> {
        use std::os::unix::fs::DirBuilderExt;
        let mut last = None;
        for _ in 0..16 {
            let token =
                crate::write_whole::unguessable().map_err(|e| format!("/dev/urandom: {e}"))?;
            let path = std::env::temp_dir().join(format!("utrace-run-{token:016x}"));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(TempFolder(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(path),
                Err(e) => return Err(format!("{}: {e}", path.display())),
            }
        }
        Err(format!(
            "{}: could not make a folder of its own there (the names tried exist)",
            last.unwrap_or_default().display()
        ))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    use super::TempFolder;

    #[test]
    fn the_manifests_folder_is_new_private_and_never_one_planted_before() {
        // What another user could have made at the old name: a folder open to all with a
        // link where the manifest goes.
        let planted = std::env::temp_dir().join(format!("utrace-run-{}", std::process::id()));
        std::fs::create_dir_all(&planted).unwrap();
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
        let a = TempFolder::new().unwrap();
        let b = TempFolder::new().unwrap();
        assert_ne!(a.path(), planted.as_path());
        assert_ne!(a.path(), b.path(), "a name of its own each time");
        let meta = std::fs::symlink_metadata(a.path()).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.mode() & 0o777, 0o700);
        let (path, planted_kept) = (a.path().to_path_buf(), planted.clone());
        drop(a);
        assert!(!path.exists(), "removed when dropped");
        assert!(planted_kept.exists(), "what was there is left alone");
        let _ = std::fs::remove_dir(&planted);
    }
}
