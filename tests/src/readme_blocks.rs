//! The README's shell blocks and the output it shows for them, and the check that a
//! command's real output has that output's shape: numbers, addresses, ids and folders
//! masked, spacing ignored, so that a command whose output changed form (a column gone,
//! a line renamed) fails while new timings do not.

/// One ```sh block, with the ```text block that follows it (blank lines between), if any.
#[derive(Debug, PartialEq)]
pub struct Block {
    /// The block's first line's number in the file, from 1.
    pub line: usize,
    pub commands: Vec<String>,
    pub shown: Vec<String>,
}

/// The ```sh blocks of a Markdown text, in order.
pub fn shell_blocks(markdown: &str) -> Vec<Block> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut blocks: Vec<Block> = Vec::new();
    let mut i = 0;
    // A fenced block from the fence at `start`: its lines and the index past its end.
    let fenced = |start: usize| -> (Vec<String>, usize) {
        let mut body = Vec::new();
        let mut j = start + 1;
        while j < lines.len() && !lines[j].starts_with("```") {
            body.push(lines[j].to_string());
            j += 1;
        }
        (body, j + 1)
    };
    while i < lines.len() {
        let fence = lines[i].trim_end();
        if !fence.starts_with("```") {
            i += 1;
            continue;
        }
        let (body, next) = fenced(i);
        if fence == "```sh" {
            let mut k = next;
            while k < lines.len() && lines[k].trim().is_empty() {
                k += 1;
            }
            let (shown, after) = if k < lines.len() && lines[k].trim_end() == "```text" {
                let (shown, after) = fenced(k);
                (shown, after)
            } else {
                (Vec::new(), next)
            };
            blocks.push(Block {
                line: i + 1,
                commands: body,
                shown,
            });
            i = after;
        } else {
            i = next;
        }
    }
    blocks
}

/// A line's shape: words separated by one space; a path's folders as `…/`; `0x` and its
/// hex digits as `0x_`; a run of 8 or more hex digits holding a decimal one (a random
/// name's token) and every decimal number (with its `.` and `,`) as `#`.
pub fn shape(line: &str) -> String {
    line.split_whitespace()
        .map(shape_word)
        .collect::<Vec<_>>()
        .join(" ")
}

fn shape_word(word: &str) -> String {
    let word = match word.rfind('/') {
        Some(at) if word.len() > 1 => format!("…/{}", &word[at + 1..]),
        _ => word.to_string(),
    };
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '0' && chars.get(i + 1) == Some(&'x') {
            let mut j = i + 2;
            while j < chars.len() && chars[j].is_ascii_hexdigit() {
                j += 1;
            }
            if j > i + 2 {
                out.push_str("0x_");
                i = j;
                continue;
            }
        }
        let mut j = i;
        while j < chars.len() && chars[j].is_ascii_hexdigit() {
            j += 1;
        }
        let digits = chars[i..j].iter().any(char::is_ascii_digit);
        if j - i >= 8 && digits {
            out.push('#');
            i = j;
            continue;
        }
        if chars[i].is_ascii_digit() {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_ascii_digit()
                    || (matches!(chars[j], '.' | ',')
                        && chars.get(j + 1).is_some_and(char::is_ascii_digit)))
            {
                j += 1;
            }
            out.push('#');
            i = j;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Whether `output` has the shape of `shown`: each shown line, in order, has a line of the
/// same [`shape`] (a shown line ending in `...` one that begins so); a line `...` alone
/// stands for lines left out. Returns the first shown line not found.
pub fn first_missing<'a>(shown: &'a [String], output: &str) -> Option<&'a str> {
    let actual: Vec<String> = output.lines().map(shape).collect();
    let mut at = 0;
    for line in shown {
        let want = shape(line);
        if want == "..." || want.is_empty() {
            continue;
        }
        let matches = |got: &String| match want.strip_suffix("...") {
            Some(prefix) => got.starts_with(prefix.trim_end()),
            None => *got == want,
        };
        match actual[at..].iter().position(matches) {
            Some(found) => at += found + 1,
            None => return Some(line),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_mask_what_changes_from_run_to_run() {
        assert_eq!(
            shape("0049673406425389      +190:    start_render_pass: render_pass=0x561b6a6de950, width=500,"),
            "# +#: start_render_pass: render_pass=0x_, width=#,"
        );
        assert_eq!(
            shape("utrace: trace: /tmp/utrace-vkcube-67c4f1ede4826ef2.txt"),
            "utrace: trace: …/utrace-vkcube-#.txt"
        );
        assert_eq!(
            shape("cmd_buffer   4   8818.1   1,204.5  B8G8R8A8_UNORM"),
            "cmd_buffer # # # B#G#R#A#_UNORM"
        );
    }

    #[test]
    fn output_must_hold_the_shown_lines_in_order() {
        let shown: Vec<String> = ["BATCH 2: frame=0", "...", "end_draw x=1, ..."]
            .map(String::from)
            .to_vec();
        assert_eq!(
            first_missing(&shown, "BATCH 7: frame=3\nother\nend_draw x=12, y=4\n"),
            None
        );
        assert_eq!(
            first_missing(&shown, "end_draw x=12, y=4\nBATCH 7: frame=3\n"),
            Some("end_draw x=1, ...")
        );
        assert_eq!(
            first_missing(&shown, "BATCH 7: frames=3\n"),
            Some("BATCH 2: frame=0")
        );
    }

    #[test]
    fn blocks_pair_commands_with_the_output_shown_after_them() {
        let md = "text\n```sh\na\nb\n```\n\n```text\nout\n```\n```sh\nc\n```\n```\nnot sh\n```\n";
        let blocks = shell_blocks(md);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].commands, ["a", "b"]);
        assert_eq!(blocks[0].shown, ["out"]);
        assert_eq!(blocks[0].line, 2);
        assert_eq!(blocks[1].commands, ["c"]);
        assert!(blocks[1].shown.is_empty());
    }
}
