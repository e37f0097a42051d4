//! Every relative link in the README and docs/ leads somewhere: the file exists and, for a
//! link to a heading (`file.md#anchor`), the file has a heading of that anchor, as GitHub
//! makes them. Moving a section from one document to another breaks no link silently.

use std::path::{Path, PathBuf};

/// GitHub's anchor of a heading: lower case, punctuation dropped (but `-` and `_`),
/// spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The lines of a Markdown text outside its fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut inside = false;
    text.lines()
        .filter(|l| {
            if l.starts_with("```") {
                inside = !inside;
                return false;
            }
            !inside
        })
        .collect()
}

fn anchors(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    prose(&text)
        .into_iter()
        .filter(|l| l.starts_with('#'))
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect()
}

/// The targets of `[text](target)` links in `line`.
fn targets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        match after.find(')') {
            Some(end) => {
                out.push(&after[..end]);
                rest = &after[end..];
            }
            None => break,
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_leads_somewhere() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files: Vec<PathBuf> = vec![repo.join("README.md")];
    for entry in std::fs::read_dir(repo.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for line in prose(&text) {
            for target in targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, fragment) = match target.split_once('#') {
                    Some((p, f)) => (p, Some(f)),
                    None => (target, None),
                };
                let linked = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path)
                };
                let name = file.strip_prefix(repo).unwrap().display().to_string();
                if !linked.exists() {
                    broken.push(format!("{name}: {target}: no such file"));
                } else if let Some(fragment) = fragment {
                    if !anchors(&linked).iter().any(|a| a == fragment) {
                        broken.push(format!("{name}: {target}: no such heading"));
                    }
                }
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: is the scan right?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(
        anchor(" Captures started from outside (`utrace capture`)"),
        "captures-started-from-outside-utrace-capture"
    );
    assert_eq!(
        anchor("What is written, and what is lost"),
        "what-is-written-and-what-is-lost"
    );
    assert_eq!(targets("see [a](b.md#c) and [d](e)"), ["b.md#c", "e"]);
}
