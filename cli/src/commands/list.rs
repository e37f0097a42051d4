//! `utrace list`: the processes that can be captured (their control sockets).

use std::path::PathBuf;

use crate::control_socket::{ask, checked_folder, folder, printable};

/// `utrace list`: every process whose socket answers. A folder that is not this user's
/// alone is refused whole: what is in it could be anyone's.
pub fn run() -> Result<(), String> {
    let Some(folder) = folder() else {
        println!("no process can be captured (XDG_RUNTIME_DIR is not set)");
        return Ok(());
    };
    match checked_folder(&folder) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("no process can be captured");
            return Ok(());
        }
        Err(e) => return Err(format!("{}: {e}", folder.display())),
    }
    let mut sockets: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    sockets.retain(|p| p.extension().is_some_and(|e| e == "sock"));
    sockets.sort();
    // Processes listed, and those that answered but could not say more (busy).
    let (mut any, mut answered) = (false, false);
    for path in sockets {
        let mut reply = None;
        let asked = ask(&path, "status", &mut |l| reply = Some(l.to_string()));
        match (asked, reply) {
            (Ok(()), Some(line)) if line.starts_with("ok ") => {
                let field = |k: &str| {
                    line.split_whitespace()
                        .find_map(|f| f.strip_prefix(k)?.strip_prefix('='))
                        .unwrap_or("?")
                        .to_string()
                };
                let capturing = if field("capturing") == "1" {
                    "yes"
                } else {
                    "no"
                };
                println!(
                    "{:>8}  {:<20}  devices={}  capturing={capturing}",
                    field("pid"),
                    field("name"),
                    field("devices")
                );
                any = true;
            }
            (_, Some(line)) => {
                answered = true;
                println!("{}: {line}", printable(&path.to_string_lossy()))
            }
            (Err(e), None) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                println!("{}: {e}", printable(&path.to_string_lossy()))
            }
            _ => println!(
                "{}: stale (nobody answers)",
                printable(&path.to_string_lossy())
            ),
        }
    }
    if !any && !answered {
        println!("no process can be captured");
    }
    Ok(())
}
