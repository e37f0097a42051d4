//! `utrace install [--implicit]` / `utrace uninstall`: the layer built beside this binary,
//! copied with its manifest into the user's loader folders
//! (`$XDG_DATA_HOME/vulkan/explicit_layer.d` or `implicit_layer.d`, `~/.local/share` when
//! `XDG_DATA_HOME` is unset), where the Vulkan loader finds it with nothing else set.

use std::path::PathBuf;

use crate::layer_files;
use crate::write_whole::write_whole;

const MANIFEST: &str = "VkLayer_utrace.json";

/// `utrace install`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// As an implicit layer: loaded whenever GPU_TRACE=1 is set, no VK_INSTANCE_LAYERS
    /// needed (never when UTRACE_DISABLE=1).
    #[arg(long)]
    implicit: bool,
}

pub fn run(args: &Args) -> Result<(), String> {
    install(args.implicit)
}

/// The user's loader folder for explicit or implicit layers.
fn folder(implicit: bool) -> Result<PathBuf, String> {
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".local/share"))
            .ok_or("neither XDG_DATA_HOME nor HOME is set")?,
    };
    let kind = if implicit {
        "implicit_layer.d"
    } else {
        "explicit_layer.d"
    };
    Ok(data.join("vulkan").join(kind))
}

fn install(implicit: bool) -> Result<(), String> {
    let library = layer_files::library_beside_exe().ok_or_else(|| {
        format!(
            "no {} beside this program to install (build it with `cargo build --release`)",
            layer_files::LIBRARY
        )
    })?;
    let dir = folder(implicit)?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let bytes = std::fs::read(&library).map_err(|e| format!("{}: {e}", library.display()))?;
    let installed = dir.join(layer_files::LIBRARY);
    write_whole(&installed, &bytes)?;
    let manifest = dir.join(MANIFEST);
    write_whole(
        &manifest,
        layer_files::manifest(implicit, &installed).as_bytes(),
    )?;
    println!("installed {}", manifest.display());
    println!("installed {}", installed.display());
    if implicit {
        println!("the loader now loads VK_LAYER_utrace whenever GPU_TRACE=1 is set");
    } else {
        println!("enable it with VK_INSTANCE_LAYERS=VK_LAYER_utrace (or `utrace run -- APP`)");
    }
    Ok(())
}

/// Removes what `install` put in either folder; says what it removed.
pub fn uninstall() -> Result<(), String> {
    let mut removed = 0;
    for implicit in [false, true] {
        let dir = folder(implicit)?;
        for name in [MANIFEST, layer_files::LIBRARY] {
            let path = dir.join(name);
            // Only what install could have put there: a file (or a link, removed itself,
            // never followed). A device or a folder by that name is not ours to remove.
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_file() || m.file_type().is_symlink() => {}
                Ok(_) => {
                    return Err(format!(
                        "{}: not a file install makes; left alone",
                        path.display()
                    ))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("{}: {e}", path.display())),
            }
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    println!("removed {}", path.display());
                    removed += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{}: {e}", path.display())),
            }
        }
    }
    if removed == 0 {
        println!("nothing to remove: utrace is not installed for this user");
    }
    Ok(())
}
