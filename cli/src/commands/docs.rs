//! `utrace completions SHELL` and `utrace man DIR`: the shell completions and the man pages
//! of the command, generated from its own definitions (clap's), so that they never fall out
//! of step with it. The man pages are written as every output of the command is
//! ([`crate::write_whole`]): whole, never through another user's link.

use std::path::{Path, PathBuf};

use clap::Command;
use clap_complete::Shell;

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    pub shell: Shell,
}

#[derive(clap::Args)]
pub struct ManArgs {
    /// The folder to write utrace.1, a utrace-COMMAND.1 per command and the layer's
    /// utrace-layer.7 into (it must exist).
    pub dir: PathBuf,
}

/// Prints `shell`'s completions of `command` to standard output.
pub fn completions(args: &CompletionsArgs, mut command: Command) -> Result<(), String> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "utrace", &mut out);
    crate::stdout::print_text(&String::from_utf8_lossy(&out))
}

/// Writes `command`'s man page and one per subcommand into `args.dir`.
pub fn man(args: &ManArgs, command: Command) -> Result<(), String> {
    if !args.dir.is_dir() {
        return Err(format!(
            "{}: no such folder (make it first: mkdir -p {})",
            args.dir.display(),
            args.dir.display()
        ));
    }
    let command = command.version(env!("UTRACE_VERSION"));
    let pages: Vec<String> = command
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| format!("utrace-{}", s.get_name()))
        .collect();
    let mut main_see_also: Vec<(&str, u8)> = pages.iter().map(|p| (p.as_str(), 1)).collect();
    main_see_also.push(("utrace-layer", 7));
    write_page(&args.dir, "utrace.1", command.clone(), &main_see_also)?;
    let layer = super::layer_page::page(env!("UTRACE_VERSION"))?;
    crate::write_whole::write_whole(&args.dir.join("utrace-layer.7"), layer.as_bytes())?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        // The page's name for the command's own (a few strings, once, in a short process).
        let name: &'static str = format!("utrace-{}", sub.get_name()).leak();
        let page = sub.clone().name(name).version(env!("UTRACE_VERSION"));
        write_page(
            &args.dir,
            &format!("{name}.1"),
            page,
            &[("utrace", 1), ("utrace-layer", 7)],
        )?;
    }
    Ok(())
}

/// Writes `command`'s page, a SEE ALSO section naming `see_also` (page, section) last.
fn write_page(
    dir: &Path,
    file: &str,
    command: Command,
    see_also: &[(&str, u8)],
) -> Result<(), String> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .map_err(|e| format!("{file}: {e}"))?;
    let refs: Vec<String> = see_also
        .iter()
        .map(|(name, section)| format!("\\fB{}\\fR({section})", name.replace('-', "\\-")))
        .collect();
    page.extend_from_slice(format!(".SH \"SEE ALSO\"\n{}\n", refs.join(", ")).as_bytes());
    crate::write_whole::write_whole(&dir.join(file), &page)
}
