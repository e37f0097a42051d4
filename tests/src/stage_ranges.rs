//! The ranges of a txt trace as Perfetto should show them, and the ranges a Perfetto trace
//! shows: the tests compare the two formats of one run, stage for stage, each stage's frame
//! with its txt batch's.

use std::collections::HashMap;

use crate::perfetto_trace::Stage;
use crate::trace_txt::Batch;

/// A range of the txt trace as Perfetto should show it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Range {
    pub gpu_ns: u64,
    pub duration: u64,
    pub name: String,
    pub submission: u64,
    pub args: Vec<(String, String)>,
    /// Its batch's frame (a Perfetto stage's `frame`; `None` where it carries none).
    pub frame: Option<u32>,
}

/// The ranges (begin + end) and markers of a txt batch, named as their stages.
pub fn txt_ranges(batch: &Batch, stages: &HashMap<String, String>) -> Vec<Range> {
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut out = Vec::new();
    for (i, e) in batch.events.iter().enumerate() {
        let range_name = |name: &str| {
            let rest = name
                .strip_prefix("start_")
                .or_else(|| name.strip_prefix("end_"))
                .or_else(|| name.strip_prefix("begin_"))
                .unwrap_or(name);
            rest.to_string()
        };
        let stage = |e: &crate::trace_txt::Event| match e.arg("label") {
            Some(label) => label.to_string(),
            None => stages[&e.name].clone(),
        };
        if e.name.starts_with("end_") {
            let r = range_name(&e.name);
            if let Some(at) = open.iter().rposition(|(_, n)| *n == r) {
                let begin = &batch.events[open[at].0];
                out.push(Range {
                    gpu_ns: begin.ns,
                    duration: e.ns - begin.ns,
                    name: stage(begin),
                    submission: batch.submission,
                    args: begin.args.clone(),
                    frame: Some(batch.frame),
                });
                open.truncate(at);
            }
        } else if stages.contains_key(&e.name)
            && (e.name.starts_with("start_") || e.name.starts_with("begin_"))
        {
            open.push((i, range_name(&e.name)));
        } else {
            out.push(Range {
                gpu_ns: e.ns,
                duration: 0,
                name: stage(e),
                submission: batch.submission,
                args: e.args.clone(),
                frame: Some(batch.frame),
            });
        }
    }
    out
}

pub fn perfetto_ranges(stages: &[Stage]) -> Vec<Range> {
    stages
        .iter()
        .map(|s| Range {
            gpu_ns: s.gpu_ns,
            duration: s.duration,
            name: s.name.clone(),
            submission: u64::from(s.submission),
            args: s.args.clone(),
            frame: s.frame,
        })
        .collect()
}
