//! The layer's own json lines and csv (layer/src/sink/json.rs, csv.rs), written from any
//! trace: a txt trace becomes json or csv that `report` reads the same. Fields in the
//! layer's order, arguments in the trace's order, each JSON value of the kind the layer
//! gives it (the tracepoint spec's, so that `cmd=0x1` stays a string and a label `"7"` is
//! not taken for a number). What the model does not keep is left out: a batch's `cmdbufs`
//! and `queries`, a txt trace's frame ends and each device's `end_of_trace` counts (its
//! `dropped` is not known once read).

use std::fmt::Write;

use utrace_format::escape::{push_csv_field, push_json_string};
use utrace_format::{header, RangeKind, ValueKind};
use utrace_format::{COUNTER_NAMES, PERF_PREFIX};

use crate::analysis::ranges::Spec;
use crate::trace::{Batch, Event, Trace};
use crate::tracepoint_spec::StageSpec;
use utrace_format::text_args;

/// Each event of `batch` with its delta from the previous and its depth (open ranges
/// around it, as the layer indents).
fn walk<'b>(batch: &'b Batch, spec: &Spec) -> Vec<(&'b Event, i64, usize)> {
    let mut depth = 0usize;
    let mut prev = batch.events.first().map_or(0, |e| e.ns);
    batch
        .events
        .iter()
        .map(|e| {
            let delta = e.ns.wrapping_sub(prev) as i64;
            prev = e.ns;
            let at = match spec.kind(&e.name) {
                Some(RangeKind::Begin) => {
                    depth += 1;
                    depth - 1
                }
                Some(RangeKind::End) => {
                    depth = depth.saturating_sub(1);
                    depth
                }
                _ => depth,
            };
            (e, delta, at)
        })
        .collect()
}

/// One argument's JSON value: a quoted value (a label, a pipeline's name) as it is, since
/// the layer's txt quoting is JSON's; numbers and booleans bare where the spec says so (or,
/// for an argument the spec does not know, where the value is one); anything else a string.
fn push_value(out: &mut String, raw: &str, kind: Option<ValueKind>) {
    if raw.len() >= 2 && raw.starts_with('"') && raw.ends_with('"') {
        // Quoted by another writer with escapes JSON lacks: unquoted and escaped again.
        match serde_json::from_str::<String>(raw) {
            Ok(_) => out.push_str(raw),
            Err(_) => {
                let pairs = text_args::parse(&format!("v={raw}"));
                push_json_string(out, pairs.first().map_or(raw, |(_, v)| v.as_str()));
            }
        }
        return;
    }
    let number = raw.parse::<i128>().is_ok();
    let boolean = raw == "true" || raw == "false";
    let bare = match kind {
        Some(ValueKind::Number) => number,
        Some(ValueKind::Bool) => boolean,
        Some(ValueKind::Text | ValueKind::Quoted) => false,
        None => number || boolean,
    };
    if bare {
        out.push_str(raw);
    } else {
        push_json_string(out, raw);
    }
}

fn push_event(out: &mut String, e: &Event, delta: i64, depth: usize, stages: &StageSpec) {
    let _ = write!(
        out,
        "{{\"ns\":{},\"delta\":{delta},\"depth\":{depth},\"name\":",
        e.ns
    );
    push_json_string(out, &e.name);
    out.push_str(",\"args\":{");
    let kinds = stages.tracepoint(&e.name).map(|t| t.args.as_slice());
    for (i, (name, raw)) in text_args::split(&e.args).into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_json_string(out, name);
        out.push(':');
        let kind = kinds.and_then(|k| k.iter().find(|(n, _)| n == name).map(|(_, k)| *k));
        push_value(out, raw, kind);
    }
    out.push_str("}}");
}

/// Each device's header (the trace's own, kept as it was written: its `format` says the
/// format it was traced in), typed again from the text a reader keeps.
fn headers(trace: &Trace, mut write: impl FnMut(&header::Header<'_>)) {
    for origin in &trace.origins {
        let fields: Vec<(&str, header::Value)> = origin
            .fields
            .iter()
            .map(|(k, v)| (k.as_str(), header::typed(k, v)))
            .collect();
        write(&header::Header {
            device: origin.device,
            fields: &fields,
        });
    }
}

pub fn json(trace: &Trace, spec: &Spec) -> String {
    let stages = StageSpec::built_in();
    let mut out = String::new();
    headers(trace, |h| h.push_json(&mut out));
    for b in &trace.batches {
        let elapsed = match (b.events.first(), b.events.last()) {
            (Some(f), Some(l)) => l.ns.saturating_sub(f.ns),
            _ => 0,
        };
        // The layer's field order: readers tell the format by `{"type":` first.
        let _ = write!(
            out,
            "{{\"type\":\"batch\",\"device\":{},\"batch\":{}",
            b.device, b.number
        );
        if let Some(q) = b.queue {
            let _ = write!(out, ",\"queue\":\"{q:#x}\"");
        }
        let _ = write!(
            out,
            ",\"frame\":{},\"submission\":{}",
            b.frame, b.submission
        );
        // Fields the source did not say are left out, not written as null.
        if let Some(t) = b.thread {
            let _ = write!(out, ",\"thread\":{t}");
        }
        let _ = write!(out, ",\"elapsed_ns\":{elapsed}");
        if let Some(s) = b.submit_ns {
            let _ = write!(out, ",\"submitted_ns\":{s}");
        }
        out.push_str(",\"events\":[");
        for (i, (e, delta, depth)) in walk(b, spec).into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_event(&mut out, e, delta, depth, &stages);
        }
        out.push_str("]}\n");
    }
    out
}

pub fn csv(trace: &Trace, spec: &Spec) -> String {
    // A trace with GPU counters gets the layer's counter columns, named in the header, as
    // the layer writes them: its statistics, or its hardware counters in their order.
    let columns = counter_columns(trace);
    let mut out = String::from(utrace_format::CSV_HEADER.trim_end());
    for c in &columns {
        out.push(',');
        out.push_str(c);
    }
    if !columns.is_empty() {
        out.push_str(",partial");
    }
    out.push('\n');
    let counters = (!columns.is_empty()).then_some(columns.len());
    headers(trace, |h| h.push_csv_row(&mut out, counters));
    let mut values: Vec<&str> = Vec::new();
    for b in &trace.batches {
        let thread = b.thread.map(|t| t.to_string()).unwrap_or_default();
        let submitted = b.submit_ns.map(|s| s.to_string()).unwrap_or_default();
        for (e, delta, depth) in walk(b, spec) {
            let _ = write!(
                out,
                "{},{},{},{},{thread},{submitted},{},{delta},{depth},{},",
                b.device, b.number, b.frame, b.submission, e.ns, e.name,
            );
            if columns.is_empty() {
                // The arguments quoted, a quote inside doubled (RFC 4180), as the layer does.
                push_csv_field(&mut out, &e.args);
            } else {
                // The counters out of the arguments, into their columns.
                values.clear();
                values.resize(columns.len() + 1, "");
                let mut args = String::new();
                for (name, raw) in text_args::split(&e.args) {
                    if let Some(i) = columns.iter().position(|c| c == name) {
                        values[i] = raw;
                    } else if name == "partial" {
                        values[columns.len()] = raw;
                    } else {
                        if !args.is_empty() {
                            args.push_str(", ");
                        }
                        let _ = write!(args, "{name}={raw}");
                    }
                }
                push_csv_field(&mut out, &args);
                for v in &values {
                    out.push(',');
                    out.push_str(v);
                }
            }
            out.push('\n');
        }
    }
    out
}

/// The counter columns of `trace`: every statistic where it has pipeline statistics, else
/// its hardware counters (`perf_...`) in the order they first come; none without counters.
fn counter_columns(trace: &Trace) -> Vec<String> {
    let mut perf: Vec<String> = Vec::new();
    for e in trace.batches.iter().flat_map(|b| &b.events) {
        for (name, _) in text_args::split(&e.args) {
            if COUNTER_NAMES.contains(&name) {
                return COUNTER_NAMES.iter().map(|n| n.to_string()).collect();
            }
            if name.starts_with(PERF_PREFIX) && !perf.iter().any(|p| p == name) {
                perf.push(name.to_string());
            }
        }
    }
    perf
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(events: Vec<Event>) -> Trace {
        Trace {
            batches: vec![Batch {
                device: 0,
                number: 4,
                queue: Some(0x10),
                frame: 2,
                submission: 3,
                thread: Some(77),
                submit_ns: None,
                events,
            }],
            origins: Vec::new(),
            notes: vec![],
        }
    }

    fn ev(ns: u64, name: &str, args: &str) -> Event {
        Event::at(ns, name, args)
    }

    /// The layer's layout to the byte: its field order, its argument order, and each
    /// value of its kind (a label of digits stays a string, a handle too; an argument the
    /// spec does not know, like a later layer's, by its look).
    #[test]
    fn json_is_the_layers_layout() {
        let t = batch(vec![
            ev(100, "start_cmd_buffer", "cmd=0x1, level=primary, usage=one_time_submit, thread=77"),
            ev(110, "begin_label", "label=\"7\""),
            ev(120, "start_draw", "vertex_count=3, instance_count=1, first_vertex=0, first_instance=0, pipeline=0x5, pipeline_name=\"a, \\\"b\\\"\", new=12, flag=true"),
            ev(130, "end_draw", ""),
        ]);
        let got = json(&t, &Spec::built_in());
        let want = concat!(
            r#"{"type":"batch","device":0,"batch":4,"queue":"0x10","frame":2,"submission":3,"thread":77,"elapsed_ns":30,"events":["#,
            r#"{"ns":100,"delta":0,"depth":0,"name":"start_cmd_buffer","args":{"cmd":"0x1","level":"primary","usage":"one_time_submit","thread":77}},"#,
            r#"{"ns":110,"delta":10,"depth":1,"name":"begin_label","args":{"label":"7"}},"#,
            r#"{"ns":120,"delta":10,"depth":2,"name":"start_draw","args":{"vertex_count":3,"instance_count":1,"first_vertex":0,"first_instance":0,"pipeline":"0x5","pipeline_name":"a, \"b\"","new":12,"flag":true}},"#,
            r#"{"ns":130,"delta":10,"depth":2,"name":"end_draw","args":{}}]}"#,
            "\n"
        );
        assert_eq!(got, want);
        let v: serde_json::Value = serde_json::from_str(&got).expect("valid JSON");
        assert_eq!(v["events"][1]["args"]["label"], "7");
    }

    #[test]
    fn csv_quotes_the_arguments() {
        let t = batch(vec![ev(5, "begin_label", "label=\"a, b\"")]);
        assert_eq!(
            csv(&t, &Spec::built_in()),
            "device,batch,frame,submission,thread,submitted,ns,delta,depth,event,args\n\
             0,4,2,3,77,,5,0,0,begin_label,\"label=\"\"a, b\"\"\"\n"
        );
    }

    #[test]
    fn csv_puts_counters_in_their_columns_as_the_layer_does() {
        let t = batch(vec![
            Event::at(0, "start_render_pass", "width=64"),
            Event::at(
                10,
                "end_render_pass",
                "perf_draws=2, perf_gpu_busy=12.5, partial=1",
            ),
        ]);
        let out = csv(&t, &Spec::built_in());
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[0].ends_with(",event,args,perf_draws,perf_gpu_busy,partial"),
            "{out}"
        );
        assert!(
            lines[1].ends_with(",start_render_pass,\"width=64\",,,"),
            "{out}"
        );
        assert!(
            lines[2].ends_with(",end_render_pass,\"\",2,12.5,1"),
            "{out}"
        );
        let t = batch(vec![Event::at(0, "end_dispatch", "compute_invocations=64")]);
        let out = csv(&t, &Spec::built_in());
        assert_eq!(
            out.lines().next(),
            Some(utrace_format::CSV_HEADER_COUNTERS.trim_end())
        );
    }
}
