//! `utrace view TRACE -o timeline.html`: one self-contained HTML file (no network access:
//! styles, scripts and the trace's data inline) with a frame-time graph, the GPU timeline
//! (a lane per queue, nested ranges, a legend that switches kinds, CPU submit markers,
//! counter tracks where the trace has GPU counters), a side panel for the selected range,
//! a search box and the statistics of the visible time.
//! The page is assembled here from its parts, one job each; `data` gives it the trace.

mod counter_data;
mod data;

use std::path::PathBuf;

use crate::analysis::ranges::Spec;
use crate::trace::Trace;

/// The page's frame: where the parts go.
const PAGE: &str = include_str!("page.html");
/// The parts, in the order they run: each script uses only those before it.
const STYLE: &str = include_str!("page.css");
const SCRIPTS: [&str; 8] = [
    include_str!("model.js"),
    include_str!("frames.js"),
    include_str!("counters.js"),
    include_str!("lanes.js"),
    include_str!("timeline.js"),
    include_str!("stats.js"),
    include_str!("panel.js"),
    include_str!("main.js"),
];
const STYLE_MARK: &str = "/*UTRACE_STYLE*/";
const SCRIPT_MARK: &str = "/*UTRACE_SCRIPT*/";
const DATA_MARK: &str = "/*UTRACE_DATA*/";

/// The page with `trace`'s data in it.
pub fn page(trace: &Trace, spec: &Spec) -> String {
    // The data sits in a <script> element: a `<` (only ever inside a JSON string) could end
    // it or open a comment there, so every one is written as the JSON escape `\u003c`.
    let data = data::json(trace, spec).replace('<', "\\u003c");
    PAGE.replacen(STYLE_MARK, STYLE, 1)
        .replacen(SCRIPT_MARK, &SCRIPTS.join("\n"), 1)
        .replacen(DATA_MARK, &data, 1)
}

/// `utrace view`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A trace the layer wrote (txt, json, csv or Perfetto).
    trace: PathBuf,
    /// The HTML file to write (`-`: standard output; a device or FIFO is written through;
    /// a link only when yours, in a folder no one else may write).
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    out: PathBuf,
}

pub fn run(args: &Args) -> Result<(), String> {
    let trace = crate::trace::load(&args.trace)?;
    let html = page(&trace, &Spec::built_in());
    crate::write_whole::write_whole(&args.out, html.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Batch, Event};
    use serde_json::Value;

    fn ev(ns: u64, name: &str, args: &str) -> Event {
        Event::at(ns, name, args)
    }

    fn data(trace: &Trace) -> Value {
        serde_json::from_str(&data::json(trace, &Spec::built_in())).expect("JSON")
    }

    /// (name, level, begin) of every range, in the data's order (by lane, level, begin).
    fn ranges(d: &Value) -> Vec<(String, u64, u64)> {
        let r = &d["ranges"];
        let mut level = Vec::new();
        for row in d["rows"].as_array().unwrap() {
            let count = row[3].as_u64().unwrap() as usize;
            level.extend(std::iter::repeat_n(row[1].as_u64().unwrap(), count));
        }
        (0..level.len())
            .map(|i| {
                let name = d["strings"][r["name"][i].as_u64().unwrap() as usize].clone();
                (
                    name.as_str().unwrap().to_string(),
                    level[i],
                    r["b"][i].as_u64().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn every_range_is_at_its_nesting_level_labels_by_their_text() {
        let trace = Trace {
            batches: vec![Batch {
                queue: Some(0x10),
                submit_ns: Some(40),
                events: vec![
                    ev(100, "start_cmd_buffer", "cmd=0x1"),
                    ev(110, "begin_label", "label=\"a </script> <!-- b\""),
                    ev(120, "start_draw", "vertex_count=3, pipeline_name=\"sky\""),
                    ev(130, "end_draw", ""),
                    ev(140, "end_label", ""),
                    ev(150, "start_draw", "vertex_count=6, pipeline=0x0"),
                    ev(160, "end_draw", ""),
                    ev(200, "end_cmd_buffer", "cmd=0x1"),
                ],
                ..Batch::default()
            }],
            origins: Vec::new(),
            notes: vec![],
        };
        let d = data(&trace);
        let got = ranges(&d);
        let want = [
            ("cmd_buffer", 0, 60),
            ("a </script> <!-- b", 1, 70),
            ("draw", 1, 110),
            ("draw", 2, 80),
        ];
        let want: Vec<(String, u64, u64)> = want
            .iter()
            .map(|(n, l, b)| (n.to_string(), *l, *b))
            .collect();
        assert_eq!(got, want);
        // Times from the earliest of ranges and submits: the submit, 60 ns before the GPU.
        assert_eq!(d["start_ns"], 40);
        assert_eq!(d["batches"]["submit"][0], 0);
        // The pipeline by its name; a null handle is none.
        let pipes: Vec<i64> = d["ranges"]["pipe"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_i64().unwrap())
            .collect();
        assert_eq!(pipes[0..3], [-1, -1, -1]);
        assert_eq!(d["strings"][pipes[3] as usize], "sky");
        assert_eq!(d["lanes"][0]["name"], "device 0 queue 0x10");
        // The frame: its span, and its GPU time (covered by its ranges).
        assert_eq!(
            (d["frames"]["b"][0].clone(), d["frames"]["e"][0].clone()),
            (60.into(), 160.into())
        );
        assert_eq!(d["frames"]["gpu"][0], 100);

        let html = page(&trace, &Spec::built_in());
        for mark in [STYLE_MARK, SCRIPT_MARK, DATA_MARK] {
            assert!(!html.contains(mark), "{mark} replaced");
        }
        assert!(!html.contains("a </script>") && !html.contains("<!-- b"));
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "no network"
        );
        // The data reads back from the page as the page reads it.
        let at = html.find("type=\"application/json\">").unwrap() + 24;
        let text = &html[at..at + html[at..].find("</script>").unwrap()];
        let back: Value = serde_json::from_str(text).unwrap();
        assert_eq!(back, d);
    }

    /// A counted range's pipeline statistics (on its end event) are among its arguments,
    /// which the selection panel lists: after the begin's, without repeating a name.
    #[test]
    fn the_selection_panel_gets_a_ranges_counters() {
        let trace = Trace {
            batches: vec![Batch {
                events: vec![
                    ev(100, "start_cmd_buffer", "cmd=0x1"),
                    ev(120, "start_dispatch", "group_count_x=5"),
                    ev(130, "end_dispatch", "compute_invocations=960"),
                    ev(200, "end_cmd_buffer", "cmd=0x1, compute_invocations=960"),
                ],
                ..Batch::default()
            }],
            origins: Vec::new(),
            notes: vec![],
        };
        let d = data(&trace);
        let args_of = |name: &str| {
            let i = ranges(&d).iter().position(|r| r.0 == name).unwrap();
            d["args"][d["ranges"]["args"][i].as_u64().unwrap() as usize].clone()
        };
        assert_eq!(
            args_of("dispatch"),
            serde_json::json!([["group_count_x", "5"], ["compute_invocations", "960"]])
        );
        assert_eq!(
            args_of("cmd_buffer"),
            serde_json::json!([["cmd", "0x1"], ["compute_invocations", "960"]])
        );
    }

    /// Ranges that cross (batches of one queue that overlap in time) go on levels where
    /// they do not overlap; a level freed is taken again.
    #[test]
    fn crossing_ranges_never_share_a_level() {
        let batch = |number, b, e| Batch {
            number,
            queue: Some(1),
            events: vec![
                ev(b, "start_cmd_buffer", "cmd=0x1"),
                ev(e, "end_cmd_buffer", "cmd=0x1"),
            ],
            ..Batch::default()
        };
        let trace = Trace {
            batches: vec![
                batch(1, 0, 100),
                batch(2, 50, 150),
                batch(3, 120, 130),
                batch(4, 160, 170),
            ],
            notes: vec![],
            origins: Vec::new(),
        };
        let d = data(&trace);
        let levels: Vec<(u64, u64)> = ranges(&d).into_iter().map(|(_, l, b)| (l, b)).collect();
        assert_eq!(levels, [(0, 0), (0, 120), (0, 160), (1, 50)]);
        // Each batch knows its lane; none has a submit time.
        assert_eq!(d["batches"]["lane"], serde_json::json!([0, 0, 0, 0]));
        assert_eq!(
            d["batches"]["submit"],
            serde_json::json!([null, null, null, null])
        );
    }

    /// The page's parts stay small, one job each.
    #[test]
    fn every_part_is_under_400_lines() {
        for part in SCRIPTS.iter().chain([&STYLE, &PAGE]) {
            let first = part.lines().next().unwrap_or_default();
            assert!(part.lines().count() < 400, "{first}");
        }
    }
}
