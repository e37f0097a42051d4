//! `utrace diff`'s output: the HURT and HELPED tables and the counts of the other groups,
//! or one JSON object.

use std::fmt::Write;

use serde_json::json;

use super::{Diff, Row, ALPHA};
use crate::analysis::groups::By;

/// A percentage with its sign; JSON has no infinity, so callers map it to null.
pub(super) fn pct(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "+inf" } else { "-inf" }.to_string()
    } else {
        format!("{v:+.1}")
    }
}

pub(super) fn us(ns: Option<f64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.1}", v / 1000.0))
}

pub(super) fn p_text(p: Option<f64>) -> String {
    match p {
        None => "-".into(),
        Some(p) if p < 0.0001 => "<0.0001".into(),
        Some(p) => format!("{p:.4}"),
    }
}

/// The HURT and HELPED tables, then how many groups did not change or are in one trace.
pub fn text(d: &Diff, by: By, threshold: f64) -> String {
    let mut out = String::new();
    let width = d
        .hurt
        .iter()
        .chain(&d.helped)
        .map(|r| r.key.chars().count())
        .chain([by.heading().len(), 24])
        .max()
        .unwrap_or(24)
        .min(48);
    for (title, rows, said) in [("HURT", &d.hurt, "slower"), ("HELPED", &d.helped, "faster")] {
        if rows.is_empty() {
            let _ = writeln!(out, "{title}: none\n");
            continue;
        }
        let _ = writeln!(
            out,
            "{title}: {} {said} by more than {threshold}% (p < {ALPHA}, 95% CI of the change excludes 0)",
            plural(rows.len(), "group"),
        );
        let _ = writeln!(
            out,
            "{:<width$} {:>7} {:>7} {:>13} {:>13} {:>9} {:>20} {:>8}",
            by.heading(),
            "n A",
            "n B",
            "median A µs",
            "median B µs",
            "change %",
            "95% CI %",
            "p"
        );
        for r in rows.iter() {
            let ci = r
                .ci_pct
                .map_or("-".into(), |(l, h)| format!("[{}, {}]", pct(l), pct(h)));
            let _ = writeln!(
                out,
                "{:<width$} {:>7} {:>7} {:>13} {:>13} {:>9} {:>20} {:>8}",
                r.key,
                r.count_a,
                r.count_b,
                us(r.median_a_ns),
                us(r.median_b_ns),
                r.change_pct.map_or("-".into(), pct),
                ci,
                p_text(r.p_value)
            );
        }
        out.push('\n');
    }
    let _ = writeln!(out, "unchanged: {}", plural(d.unchanged.len(), "group"));
    for (side, rows) in [("A", &d.only_in_a), ("B", &d.only_in_b)] {
        let _ = write!(out, "only in {side}: {}", plural(rows.len(), "group"));
        if !rows.is_empty() {
            const SHOWN: usize = 10;
            let names: Vec<&str> = rows.iter().take(SHOWN).map(|r| r.key.as_str()).collect();
            let more = if rows.len() > SHOWN { ", ..." } else { "" };
            let _ = write!(out, " ({}{more})", names.join(", "));
        }
        out.push('\n');
    }
    if let Some(c) = &d.counters {
        super::counters::text(c, by.heading(), &mut out);
    }
    out
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The diff as one JSON object of five lists of rows: `{key, count_a, count_b, median_a_ns,
/// median_b_ns, change_pct, ci_low_pct, ci_high_pct, p_value}` (null where a value does
/// not apply, or is infinite), and `counters` (null without pipeline statistics).
pub fn json(d: &Diff) -> serde_json::Value {
    let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
    let rows = |rows: &[Row]| -> Vec<serde_json::Value> {
        rows.iter()
            .map(|r| {
                json!({
                    "key": r.key, "count_a": r.count_a, "count_b": r.count_b,
                    "median_a_ns": r.median_a_ns, "median_b_ns": r.median_b_ns,
                    "change_pct": finite(r.change_pct),
                    "ci_low_pct": finite(r.ci_pct.map(|c| c.0)),
                    "ci_high_pct": finite(r.ci_pct.map(|c| c.1)),
                    "p_value": r.p_value,
                })
            })
            .collect()
    };
    json!({
        "hurt": rows(&d.hurt),
        "helped": rows(&d.helped),
        "unchanged": rows(&d.unchanged),
        "only_in_a": rows(&d.only_in_a),
        "only_in_b": rows(&d.only_in_b),
        "counters": d.counters.as_ref().map(super::counters::json),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::diff::compare;
    use crate::commands::diff::tests::{around, groups, keys};

    #[test]
    fn output_lists_each_section() {
        let d = compare(
            groups(&[
                ("lighting", around(800_000, 20)),
                ("post", around(300_000, 20)),
            ]),
            groups(&[
                ("lighting", around(8_000_000, 20)),
                ("post", around(300_000, 20)),
            ]),
            5.0,
        );
        let t = text(&d, By::Label, 5.0);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].starts_with("HURT: 1 group slower by more than 5%"),
            "{t}"
        );
        assert!(
            lines[1].starts_with("label") && lines[1].ends_with(" p"),
            "{t}"
        );
        assert!(
            lines[2].starts_with("lighting ") && lines[2].contains("+900.0"),
            "{t}"
        );
        assert!(
            t.contains("HELPED: none\n") && t.contains("unchanged: 1 group\n"),
            "{t}"
        );
        assert!(
            t.contains("only in A: 0 groups\nonly in B: 0 groups\n"),
            "{t}"
        );

        let v = json(&d);
        assert_eq!(v["hurt"][0]["key"], "lighting");
        assert_eq!(v["hurt"][0]["count_b"], 20);
        assert!(v["hurt"][0]["ci_low_pct"].as_f64().unwrap() > 0.0);
        assert_eq!(v["unchanged"][0]["p_value"], 1.0);
        assert_eq!(v["helped"], json!([]));
    }

    #[test]
    fn a_group_from_zero_is_infinitely_slower_and_json_says_null() {
        let d = compare(
            groups(&[("clear", vec![0; 10])]),
            groups(&[("clear", around(1000, 10))]),
            5.0,
        );
        assert_eq!(keys(&d.hurt), ["clear"]);
        assert!(text(&d, By::Tracepoint, 5.0).contains("+inf"));
        assert_eq!(json(&d)["hurt"][0]["change_pct"], serde_json::Value::Null);
    }
}
