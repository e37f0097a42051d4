//! Printing a command's result. `print!` panics when stdout is a closed pipe
//! (`utrace report t.txt | head`): here a closed reader ends the output quietly, as it
//! does for other command-line tools, and any other write error is the command's error.
//! Text made from a trace goes through [`print_text`]: labels and arguments come from the
//! traced application (or whoever wrote the file), and must not drive the terminal.

use std::io::Write;

pub fn print(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("writing the output: {e}")),
    }
}

/// [`print`], with every control character but line ends and tabs shown as an escape.
pub fn print_text(text: &str) -> Result<(), String> {
    print(&terminal_safe(text))
}

/// `text` with its control characters (escape sequences, bells, carriage returns, C1
/// controls) escaped, line ends and tabs kept.
pub fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_from_a_trace_are_shown_escaped() {
        let text = "label=\u{1b}]0;pwned\u{7}\u{1b}[31mRED\u{9b}1m\tx\n";
        assert_eq!(
            super::terminal_safe(text),
            "label=\\u{1b}]0;pwned\\u{7}\\u{1b}[31mRED\\u{9b}1m\tx\n"
        );
    }
}
