//! The `brackets` module of the generated code: the ranges whose two tracepoints a hook
//! records at once on the trace's short path (`CommandTrace::append_bracket`).

use std::fmt::Write;

use super::{encode, words};
use crate::spec::{RangeKind, Spec};

/// The ranges a hook may record both ends of at once (`bracketed!`'s `bracket`): a begin
/// written as the command starts, whose arguments are all stored inline, and an end after
/// it, without arguments, under one switch. Each gets a module: the begin's words, each end
/// alone, and both at once on the trace's short path (`CommandTrace::append_bracket`).
pub(super) fn emit_brackets(o: &mut String, spec: &Spec) {
    o.push_str(
        "/// Ranges whose two tracepoints a `bracketed!` hook records at once where it can.\n",
    );
    o.push_str("pub mod brackets {\n");
    let tps = &spec.tracepoints;
    for (start, b) in tps.iter().enumerate() {
        let Some(end) = tps
            .iter()
            .position(|e| e.kind == RangeKind::End && e.range == b.range && e.toggle == b.toggle)
        else {
            continue;
        };
        let e = &tps[end];
        let inline = b.args.iter().all(|a| !a.ty.out_of_line);
        let ends = b.kind == RangeKind::Begin && !b.end_of_pipe && e.end_of_pipe;
        if !ends || !inline || !e.args.is_empty() {
            continue;
        }
        let params: Vec<String> = b
            .args
            .iter()
            .map(|a| format!("{}: {}", a.name, a.ty.param))
            .collect();
        let ws: Vec<String> = b
            .args
            .iter()
            .flat_map(|a| encode(a.ty.repr, &a.name))
            .collect();
        let (n, b_name, e_name) = (words(b), &b.name, &e.name);
        let lines = [
            format!("    /// `{b_name}` and `{e_name}`."),
            format!("    pub mod {} {{", b.range),
            "        use super::super::*;".to_string(),
            String::new(),
            format!("        /// `{b_name}`'s arguments, as the trace stores them."),
            "        #[inline(always)]".to_string(),
            "        #[allow(clippy::too_many_arguments)]".to_string(),
            format!("        pub fn words({}) -> [u32; {n}] {{", params.join(", ")),
            format!("            [{}]", ws.join(", ")),
            "        }".to_string(),
            String::new(),
            format!("        /// `{b_name}` alone."),
            "        #[inline(always)]".to_string(),
            format!("        pub fn start(rec: &Recorder<'_>, trace: &mut CommandTrace, words: [u32; {n}]) {{"),
            format!("            trace.append(rec, {start}, false, words);"),
            "        }".to_string(),
            String::new(),
            format!("        /// `{e_name}` alone."),
            "        #[inline(always)]".to_string(),
            "        pub fn end(rec: &Recorder<'_>, trace: &mut CommandTrace) {".to_string(),
            format!("            trace.append(rec, {end}, true, []);"),
            "        }".to_string(),
            String::new(),
            "        /// Both, if the trace's short path has room for them.".to_string(),
            "        #[inline(always)]".to_string(),
            format!("        pub fn both(trace: &mut CommandTrace, words: [u32; {n}]) -> Option<Bracket> {{"),
            format!("            trace.append_bracket({start}, {end}, words)"),
            "        }".to_string(),
            "    }".to_string(),
        ];
        for line in lines {
            let _ = writeln!(o, "{line}");
        }
    }
    o.push_str("}\n");
}
