//! `utrace diff`'s outputs for CI: a Markdown table (a job summary) and a JUnit report (one
//! test case per group; a HURT group fails), beside the text and JSON of `output`.

use std::fmt::Write;

use super::output::{p_text, pct, us};
use super::{Diff, Row};
use crate::analysis::groups::By;

/// Every compared group, HURT first, then HELPED, then unchanged, and what each side alone
/// has: (row, verdict).
fn verdicts(d: &Diff) -> Vec<(&Row, &'static str)> {
    let tag = |rows: &'static str| move |r| (r, rows);
    d.hurt
        .iter()
        .map(tag("HURT"))
        .chain(d.helped.iter().map(tag("HELPED")))
        .chain(d.unchanged.iter().map(tag("unchanged")))
        .chain(d.only_in_a.iter().map(tag("only in A")))
        .chain(d.only_in_b.iter().map(tag("only in B")))
        .collect()
}

fn ci(r: &Row) -> String {
    r.ci_pct
        .map_or("-".into(), |(l, h)| format!("[{}, {}]", pct(l), pct(h)))
}

/// A Markdown table of every group, `preamble` (the runs, the mismatches) above it.
pub fn markdown(d: &Diff, by: By, threshold: f64, preamble: &str) -> String {
    let mut out = String::from("### utrace diff\n\n");
    for line in preamble.lines().filter(|l| !l.is_empty()) {
        let _ = writeln!(out, "{line}  ");
    }
    let _ = writeln!(
        out,
        "\n**{}** HURT, **{}** HELPED (a change beyond {threshold}%, p < 0.05, its 95% CI excluding 0)\n",
        d.hurt.len(),
        d.helped.len()
    );
    let _ = writeln!(
        out,
        "| {} | verdict | n A | n B | median A µs | median B µs | change % | 95% CI % | p |",
        by.heading()
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---|---:|\n");
    for (r, verdict) in verdicts(d) {
        let verdict = if verdict == "HURT" || verdict == "HELPED" {
            format!("**{verdict}**")
        } else {
            verdict.to_string()
        };
        let _ = writeln!(
            out,
            "| `{}` | {verdict} | {} | {} | {} | {} | {} | {} | {} |",
            r.key.replace('|', "\\|").replace('`', "'"),
            r.count_a,
            r.count_b,
            us(r.median_a_ns),
            us(r.median_b_ns),
            r.change_pct.map_or("-".into(), pct),
            ci(r),
            p_text(r.p_value)
        );
    }
    out
}

/// `text` with `&`, `<`, `>` and quotes escaped for XML.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A JUnit report: a test suite per diff (one, or one per machine), a test case per
/// group compared, failing where it got slower.
pub fn junit(suites: &[(&str, &Diff)], threshold: f64) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (name, d) in suites {
        suite(&mut out, name, d, threshold);
    }
    out.push_str("</testsuites>\n");
    out
}

fn suite(out: &mut String, name: &str, d: &Diff, threshold: f64) {
    let cases = verdicts(d);
    let _ = writeln!(
        out,
        "<testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">",
        xml(name),
        cases.len(),
        d.hurt.len()
    );
    for (r, verdict) in cases {
        let _ = write!(
            out,
            "  <testcase classname=\"utrace.diff\" name=\"{}\"",
            xml(&r.key)
        );
        if verdict == "HURT" {
            let message = format!(
                "{}% slower: median {} -> {} µs, 95% CI {}, p {} (threshold {threshold}%)",
                r.change_pct.map_or("-".into(), pct),
                us(r.median_a_ns),
                us(r.median_b_ns),
                ci(r),
                p_text(r.p_value)
            );
            let _ = writeln!(
                out,
                ">\n    <failure message=\"{}\" type=\"HURT\"/>\n  </testcase>",
                xml(&message)
            );
        } else {
            let _ = writeln!(
                out,
                ">\n    <system-out>{}</system-out>\n  </testcase>",
                xml(&format!(
                    "{verdict}: {}",
                    r.change_pct.map_or("-".into(), pct)
                ))
            );
        }
    }
    out.push_str("</testsuite>\n");
}

#[cfg(test)]
mod tests {
    use super::super::tests::{around, groups};
    use super::*;

    #[test]
    fn ci_outputs_list_every_group_and_fail_the_hurt_ones() {
        let d = super::super::compare(
            groups(&[("a<b", around(1000, 20)), ("same", around(1000, 20))]),
            groups(&[("a<b", around(2000, 20)), ("same", around(1000, 20))]),
            5.0,
        );
        let md = markdown(&d, By::Tracepoint, 5.0, "runs: A 10, B 10\n");
        assert!(md.contains("| `a<b` | **HURT** | 20 | 20 |"), "{md}");
        assert!(md.contains("| `same` | unchanged |"), "{md}");
        assert!(md.contains("runs: A 10, B 10  \n"), "{md}");
        let xml = junit(&[("utrace diff", &d)], 5.0);
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        assert!(
            xml.contains("name=\"a&lt;b\">\n    <failure message=\"+"),
            "{xml}"
        );
        assert!(
            xml.contains("name=\"same\">\n    <system-out>unchanged"),
            "{xml}"
        );
    }
}
