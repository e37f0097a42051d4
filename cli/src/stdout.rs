//! Printing a command's result. `print!` panics when stdout is a closed pipe
//! (`utrace report t.txt | head`): here a closed reader ends the output quietly, as it
//! does for other command-line tools, and any other write error is the command's error.

use std::io::Write;

pub fn print(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("writing the output: {e}")),
    }
}
