//! Assertions the integration tests share: a trace against the workload's own account of
//! what it submitted.

use crate::harness::Run;
use crate::report::Submission;
use crate::trace_txt::{Batch, Event, Trace};

/// Checks that `batches` are exactly `submissions`, one for one and in order: at the top
/// level, per submitted command buffer one `start_cmd_buffer`/`end_cmd_buffer` pair naming
/// it; every event inside the submission's CPU window (Lavapipe's device clock is
/// CLOCK_MONOTONIC), and its submit time (where the trace gives one) between the call's
/// start and the batch's first event, within [`SUBMIT_SLACK_NS`]; ranges well nested (see [`assert_well_nested`]); batch numbers counting
/// from 1; `ELAPSED` the batch's span and deltas between neighbours.
/// How far a batch's submit time may be from the truth: the error of Lavapipe's calibrated
/// clock pairs (a few hundred ns) with room to spare. Not a duration a slow or busy
/// machine stretches: each pair is the tightest of 4 to 16 bracketed reads, so a read
/// preempted on a busy machine leaves the others.
pub const SUBMIT_SLACK_NS: u64 = 2_000;

pub fn assert_batches_match(batches: &[&Batch], submissions: &[Submission]) {
    assert_batches_match_within(batches, submissions, SUBMIT_SLACK_NS);
}

/// [`assert_batches_match`] with the submit times allowed `submit_slack_ns` of pairing error
/// (a measured clock's bound, for one).
pub fn assert_batches_match_within(
    batches: &[&Batch],
    submissions: &[Submission],
    submit_slack_ns: u64,
) {
    assert_eq!(
        batches.len(),
        submissions.len(),
        "one batch per submission: {batches:#?}"
    );
    for (i, (batch, sub)) in batches.iter().zip(submissions).enumerate() {
        let what = format!("batch {} ({})", batch.number, sub.label);
        assert_eq!(batch.number, i as u64 + 1, "{what}: numbered in order");
        assert_eq!(batch.frame, sub.frame, "{what}: frame");
        assert_eq!(
            batch.cmdbufs as usize,
            sub.cmdbufs.len(),
            "{what}: cmdbufs="
        );
        let top = top_level(batch);
        assert_eq!(
            top.len(),
            2 * sub.cmdbufs.len(),
            "{what}: one start/end pair per command buffer at the top level: {:#?}",
            batch.events
        );
        for (pair, cmd) in top.chunks(2).zip(&sub.cmdbufs) {
            let (start, end) = (pair[0], pair[1]);
            assert_eq!(start.name, "start_cmd_buffer", "{what}");
            assert_eq!(end.name, "end_cmd_buffer", "{what}");
            assert_eq!(
                start.arg("cmd"),
                Some(cmd.as_str()),
                "{what}: start names its command buffer"
            );
            assert_eq!(
                end.arg("cmd"),
                Some(cmd.as_str()),
                "{what}: end names its command buffer"
            );
            assert_eq!(start.arg("level"), Some("primary"), "{what}");
            assert!(
                start.ns <= end.ns,
                "{what}: start {} after end {}",
                start.ns,
                end.ns
            );
        }
        for e in &batch.events {
            assert!(
                sub.cpu_before_ns <= e.ns && e.ns <= sub.cpu_after_ns,
                "{what}: {} at {} outside the submission's CPU window [{}, {}]",
                e.name,
                e.ns,
                sub.cpu_before_ns,
                sub.cpu_after_ns
            );
        }
        let first = batch.events.first().map_or(0, |e| e.ns);
        if let Some(submitted) = batch.submitted {
            assert!(
                sub.cpu_before_ns <= submitted + submit_slack_ns
                    && submitted <= first + submit_slack_ns,
                "{what}: submitted at {submitted}, not between the call's start {} and the first event {first}",
                sub.cpu_before_ns
            );
        }
        assert_well_nested(&batch.events, &what);
        let last = batch.events.last().map_or(0, |e| e.ns);
        assert_eq!(batch.elapsed_ns, last - first, "{what}: ELAPSED");
        for w in batch.events.windows(2) {
            assert_eq!(
                w[1].delta,
                w[1].ns as i64 - w[0].ns as i64,
                "{what}: deltas"
            );
        }
    }
}

/// The events at depth 0: the submitted command buffers' start and end.
pub fn top_level(batch: &Batch) -> Vec<&Event> {
    batch.events.iter().filter(|e| e.depth == 0).collect()
}

/// How an event relates to ranges, from its name: `start_X`/`end_X` open and close range
/// `X`, `begin_label`/`end_label` range `label`; anything else is a marker.
pub enum Kind<'a> {
    Begin(&'a str),
    End(&'a str),
    Marker,
}

pub fn kind(name: &str) -> Kind<'_> {
    if let Some(r) = name.strip_prefix("start_") {
        Kind::Begin(r)
    } else if let Some(r) = name.strip_prefix("end_") {
        Kind::End(r)
    } else if name == "begin_label" {
        Kind::Begin("label")
    } else {
        Kind::Marker
    }
}

/// Ranges nest: a child begins no earlier than its parent, a range ends no earlier than it
/// began, and the printed indentation is the number of ranges open around the event. An
/// end whose begin is not in the batch (a label opened by an earlier submission) is fine.
pub fn assert_well_nested(events: &[Event], what: &str) {
    let mut open: Vec<(&str, u64)> = Vec::new();
    for e in events {
        match kind(&e.name) {
            Kind::Begin(range) => {
                assert_eq!(e.depth, open.len(), "{what}: indentation of {}", e.name);
                if let Some((parent, at)) = open.last() {
                    assert!(
                        e.ns >= *at,
                        "{what}: {} at {} before its parent {parent} began at {at}",
                        e.name,
                        e.ns
                    );
                }
                open.push((range, e.ns));
            }
            Kind::End(range) => {
                if let Some(at) = open.iter().rposition(|(r, _)| *r == range) {
                    assert!(
                        e.ns >= open[at].1,
                        "{what}: {} at {} before its begin at {}",
                        e.name,
                        e.ns,
                        open[at].1
                    );
                    open.truncate(at);
                }
                assert_eq!(e.depth, open.len(), "{what}: indentation of {}", e.name);
            }
            Kind::Marker => {
                assert_eq!(e.depth, open.len(), "{what}: indentation of {}", e.name);
                if let Some((parent, at)) = open.last() {
                    assert!(
                        e.ns >= *at,
                        "{what}: {} before its parent {parent} began",
                        e.name
                    );
                }
            }
        }
    }
}

/// Every range begun in `batch` ends in it and every end closes a range begun in it, in
/// nesting order (stricter than [`assert_well_nested`], for batches whose command buffers
/// open and close all their labels themselves).
pub fn assert_balanced(batch: &Batch) {
    let mut open: Vec<&str> = Vec::new();
    for e in &batch.events {
        match kind(&e.name) {
            Kind::Begin(range) => open.push(range),
            Kind::End(range) => assert_eq!(
                open.pop(),
                Some(range),
                "batch {}: {} closes a range that is not the innermost open one: {:#?}",
                batch.number,
                e.name,
                batch.events
            ),
            Kind::Marker => {}
        }
    }
    assert!(
        open.is_empty(),
        "batch {}: ranges left open: {open:?}: {:#?}",
        batch.number,
        batch.events
    );
}

/// The events of `batch` named `name`.
pub fn named<'a>(batch: &'a Batch, name: &str) -> Vec<&'a Event> {
    batch.events.iter().filter(|e| e.name == name).collect()
}

/// The batches of one device, in order.
pub fn device_batches(trace: &Trace, device: u32) -> Vec<&Batch> {
    trace
        .batches
        .iter()
        .filter(|b| b.device == device)
        .collect()
}

/// Parses a trace or fails the test showing the text; each device that wrote a batch has
/// its whole header before it ([`assert_headers`]).
pub fn parse(text: &str) -> Trace {
    let trace = crate::trace_txt::parse_trace(text)
        .unwrap_or_else(|e| panic!("bad trace: {e}\n---\n{text}"));
    assert_headers(&trace, text);
    trace
}

/// Every device that wrote a batch wrote its header first: the four sections, once each,
/// in order, before the device's first batch, naming the build, the device and the format.
pub fn assert_headers(trace: &Trace, text: &str) {
    use crate::trace_txt::{Item, HEADER_SECTIONS};
    let mut devices: Vec<u32> = trace.batches.iter().map(|b| b.device).collect();
    devices.dedup();
    for device in devices {
        let mut sections = Vec::new();
        for item in &trace.items {
            match item {
                Item::Header(i) if trace.headers[*i].device == device => {
                    sections.push(trace.headers[*i].section.as_str())
                }
                Item::Batch(i) if trace.batches[*i].device == device => break,
                _ => {}
            }
        }
        assert_eq!(
            sections, HEADER_SECTIONS,
            "device {device}'s header before its first batch:\n{text}"
        );
        let version = trace.header(device, "utrace").unwrap_or_default();
        assert!(
            version.starts_with(&format!("{} (commit ", env!("CARGO_PKG_VERSION"))),
            "utrace={version:?}"
        );
        for key in [
            "device_name",
            "driver_version",
            "api_version",
            "clock",
            "pid",
            "started",
        ] {
            assert!(
                trace.header(device, key).is_some_and(|v| !v.is_empty()),
                "device {device}'s header has {key}:\n{text}"
            );
        }
        assert_eq!(trace.header(device, "format"), Some("txt"));
    }
}

/// The validation layer's report about itself, not the application or utrace: its own
/// bookkeeping of a timeline semaphore gave up after its internal timeout (10 s), "most
/// likely a validation bug" in its words. A wait-before-signal the host releases later (the
/// `wait-before-signal` scenario: 400 submissions first, with synchronization validation,
/// longer than that on a busy machine) is legal Vulkan.
const VALIDATION_SELF_DIAGNOSED: &str = "UNASSIGNED-VkSemaphore-state-timeout";

/// The run succeeded, every result was right and validation said nothing (but for
/// [`VALIDATION_SELF_DIAGNOSED`]).
pub fn assert_clean(run: &Run) {
    assert!(run.success, "the workload failed: {}", run.stderr);
    assert!(
        run.report().devices.iter().all(|d| d.results_ok),
        "wrong results: {}",
        run.stderr
    );
    let messages: Vec<&String> = run
        .report()
        .validation_messages
        .iter()
        .filter(|m| !m.contains(VALIDATION_SELF_DIAGNOSED))
        .collect();
    assert!(messages.is_empty(), "validation messages: {messages:#?}");
}

/// The messages VK_LAYER_KHRONOS_validation logged in an application's output, when it ran
/// with [`crate::harness::VALIDATION_LOG`]: each message's first line names its VUID and
/// says "Validation" (the lines after it list the objects involved).
pub fn validation_log(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter(|l| l.contains("Validation") || l.contains("VUID"))
        .collect()
}

/// Parses `text` and checks every device's batches against the run's report.
pub fn assert_trace_matches(text: &str, run: &Run) -> Trace {
    let trace = parse(text);
    for device in &run.report().devices {
        assert_batches_match(&device_batches(&trace, device.index), &device.submissions);
    }
    trace
}

/// What a soak run showed: submissions made, the trace's counts, and resident memory.
#[derive(Debug)]
pub struct Soak {
    pub submitted: u64,
    pub batches: u64,
    pub events: u64,
    pub dropped: u64,
    /// Resident memory after the warm-up tenth and at the end, in KiB.
    pub rss_after_warmup_kib: u64,
    pub rss_at_end_kib: u64,
}

/// Reads a soak run (scenario `soak`, traced to `trace`): the trace is not parsed whole
/// (it is large); its closing counts are checked against the submissions.
pub fn soak_result(run: &Run, trace: &std::path::Path) -> Soak {
    assert!(run.success, "the soak run failed: {}", run.stderr);
    let device = &run.report().devices[0];
    let text = std::fs::read_to_string(trace).expect("the soak trace");
    let last = text.lines().last().unwrap_or_default();
    let end = crate::trace_txt::parse_trace(last).expect("an END OF TRACE line");
    let end = end.ends.first().expect("an END OF TRACE line");
    Soak {
        submitted: device.unlogged_submissions,
        batches: end.batches,
        events: end.events,
        dropped: end.dropped,
        rss_after_warmup_kib: device.rss_kib.first().copied().unwrap_or(0),
        rss_at_end_kib: device.rss_kib.last().copied().unwrap_or(0),
    }
}

/// `utrace report --json`'s output, checked to have succeeded: the whole JSON object, and
/// the (key, count) of each of its rows, sorted.
pub fn report_rows(out: &std::process::Output) -> (serde_json::Value, Vec<(String, u64)>) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let mut rows: Vec<(String, u64)> = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            let key = r["key"].as_str().expect("a key").to_string();
            (key, r["count"].as_u64().expect("a count"))
        })
        .collect();
    rows.sort();
    (v, rows)
}

/// Each batch of a transfer scenario: the command buffer, a fill and an update.
pub fn assert_transfer_batches(trace: &Trace) {
    for b in &trace.batches {
        assert_eq!(named(b, "start_fill_buffer").len(), b.cmdbufs as usize);
        assert_eq!(named(b, "start_update_buffer").len(), b.cmdbufs as usize);
        assert_eq!(b.events.len(), 6 * b.cmdbufs as usize);
    }
}

/// What the layer said on stderr (its `utrace:` lines), less the one diagnostic a busy
/// machine alone can add to any run that resubmits a command buffer: a resubmission that
/// waited 10 ms or more for its last run's read (the traceq thread, reading it under the
/// run's lock, may be kept off the cores; said once per process). Tests of that wait look
/// for it in the whole stderr.
pub fn said(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|l| l.starts_with("utrace:"))
        .filter(|l| !l.contains("for its last run's timestamps to be read"))
        .collect()
}
