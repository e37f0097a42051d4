//! The Perfetto render stages of the tracepoint spec (`tracepoints/tracepoints.toml`): the
//! stage each begin or marker tracepoint shows as (`start_draw` is `Draw`; a label's stage
//! is named by the label's text), and, reading a trace, the tracepoints a stage stands for.

use std::collections::HashMap;

use utrace_format::{Category, RangeKind, ValueKind};
use utrace_tracepoints::spec;

/// What the Perfetto reader and writer need of one tracepoint.
#[derive(Debug)]
pub struct Tracepoint {
    pub name: String,
    pub kind: RangeKind,
    /// The range a begin or end belongs to.
    pub range: String,
    /// The stage it shows as (begins and markers).
    pub stage: Option<String>,
    pub category: Option<Category>,
    /// Its arguments' names, and how each is written.
    pub args: Vec<(String, ValueKind)>,
}

impl Tracepoint {
    /// The name of its label argument (the text that names its stage), if it has one.
    pub fn label_arg(&self) -> Option<&str> {
        self.args
            .iter()
            .find(|(_, kind)| *kind == ValueKind::Quoted)
            .map(|(name, _)| name.as_str())
    }
}

pub struct StageSpec {
    tracepoints: Vec<Tracepoint>,
    by_name: HashMap<String, usize>,
    /// Begin and marker tracepoints by stage name.
    by_stage: HashMap<String, Vec<usize>>,
    /// Begin and marker tracepoints whose stage is named by a label.
    labelled: Vec<usize>,
    /// Each range's end tracepoint.
    ends: HashMap<String, usize>,
}

impl StageSpec {
    /// The spec this build of utrace was made with (the layer's).
    pub fn built_in() -> StageSpec {
        StageSpec::new(super::built_in())
    }

    fn new(parsed: spec::Spec) -> StageSpec {
        let tracepoints: Vec<Tracepoint> = parsed
            .tracepoints
            .into_iter()
            .map(|t| Tracepoint {
                name: t.name,
                kind: t.kind,
                range: t.range,
                stage: t.stage,
                category: t.category,
                args: t.args.into_iter().map(|a| (a.name, a.ty.kind)).collect(),
            })
            .collect();
        let mut s = StageSpec {
            by_name: HashMap::new(),
            by_stage: HashMap::new(),
            labelled: Vec::new(),
            ends: HashMap::new(),
            tracepoints: Vec::new(),
        };
        for (i, t) in tracepoints.iter().enumerate() {
            s.by_name.insert(t.name.clone(), i);
            match t.kind {
                RangeKind::End => {
                    s.ends.insert(t.range.clone(), i);
                }
                RangeKind::Begin | RangeKind::Marker => {
                    if let Some(stage) = &t.stage {
                        s.by_stage.entry(stage.clone()).or_default().push(i);
                    }
                    if t.label_arg().is_some() {
                        s.labelled.push(i);
                    }
                }
            }
        }
        s.tracepoints = tracepoints;
        s
    }

    pub fn tracepoint(&self, name: &str) -> Option<&Tracepoint> {
        self.by_name.get(name).map(|&i| &self.tracepoints[i])
    }

    /// The end tracepoint of `begin`'s range.
    pub fn end_of(&self, begin: &Tracepoint) -> Option<&Tracepoint> {
        match begin.kind {
            RangeKind::Begin => self.ends.get(&begin.range).map(|&i| &self.tracepoints[i]),
            _ => None,
        }
    }

    /// The begin or marker tracepoint a stage named `name` comes from, and whether the
    /// name is a label's. `label` is the stage's label argument, if it has one: a stage
    /// named by its label is a label even when the label reads like a spec stage ("Draw"),
    /// and a name the spec does not know is taken for a label too.
    ///
    /// A label range and a label marker (`insert_label`) look alike in Perfetto; a marker
    /// has no duration, so a stage of none is taken for the marker.
    pub fn begin_of_stage(
        &self,
        name: &str,
        label: Option<&str>,
        duration: u64,
    ) -> Option<(&Tracepoint, bool)> {
        let (candidates, is_label) = match self.by_stage.get(name) {
            Some(c) if label != Some(name) => (c.as_slice(), false),
            _ => (self.labelled.as_slice(), true),
        };
        let want = if duration == 0 {
            RangeKind::Marker
        } else {
            RangeKind::Begin
        };
        let at = candidates
            .iter()
            .find(|&&i| self.tracepoints[i].kind == want)
            .or_else(|| candidates.first())?;
        Some((&self.tracepoints[*at], is_label))
    }

    /// The value of the label argument among a stage's `pairs` (an argument named as a
    /// label argument of the spec).
    pub fn label_in<'p>(&self, pairs: &'p [(String, String)]) -> Option<&'p str> {
        pairs.iter().find_map(|(name, value)| {
            self.labelled
                .iter()
                .any(|&i| self.tracepoints[i].label_arg() == Some(name))
                .then_some(value.as_str())
        })
    }

    /// The stage `begin` (a begin or marker tracepoint) shows as, and whether it is named by
    /// its label (`label`, the label's text, when the event has one).
    pub fn stage_of<'a>(&'a self, begin: &'a Tracepoint, label: Option<&'a str>) -> &'a str {
        match (begin.label_arg(), label) {
            (Some(_), Some(text)) => text,
            _ => begin.stage.as_deref().unwrap_or(&begin.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_name_their_tracepoints_and_back() {
        let s = StageSpec::built_in();
        let draw = s.tracepoint("start_draw").unwrap();
        assert_eq!(s.stage_of(draw, None), "Draw");
        assert_eq!(s.end_of(draw).unwrap().name, "end_draw");
        let (tp, label) = s.begin_of_stage("Draw", None, 10).unwrap();
        assert_eq!((tp.name.as_str(), label), ("start_draw", false));
        // A draw of no duration is still a draw.
        assert_eq!(
            s.begin_of_stage("Draw", None, 0).unwrap().0.name,
            "start_draw"
        );
        let (tp, label) = s.begin_of_stage("Next Subpass", None, 0).unwrap();
        assert_eq!((tp.name.as_str(), label), ("next_subpass", false));
        assert!(s.end_of(tp).is_none());
    }

    #[test]
    fn labels_are_named_by_their_text() {
        let s = StageSpec::built_in();
        let begin = s.tracepoint("begin_label").unwrap();
        assert_eq!(begin.label_arg(), Some("label"));
        assert_eq!(s.stage_of(begin, Some("scene")), "scene");
        let (tp, label) = s.begin_of_stage("scene", Some("scene"), 5).unwrap();
        assert_eq!((tp.name.as_str(), label), ("begin_label", true));
        assert_eq!(
            s.begin_of_stage("scene", None, 0).unwrap().0.name,
            "insert_label"
        );
        // A label that reads like a stage of the spec is still a label.
        let (tp, label) = s.begin_of_stage("Draw", Some("Draw"), 5).unwrap();
        assert_eq!((tp.name.as_str(), label), ("begin_label", true));
    }
}
