//! How far the measured GPU clock (no calibrated timestamps) puts Perfetto's events from
//! where they belong. Lavapipe's device clock is `CLOCK_MONOTONIC`, so the truth is known:
//! a range's device time plus the offset between `CLOCK_MONOTONIC` and `CLOCK_BOOTTIME`
//! (Perfetto's clock). Each range of the txt trace is paired with the Perfetto stage of the
//! same run, and the stage's start on BOOTTIME compared with that truth. Used by the
//! `perfetto_clock` tests (the error within the bound the trace writes) and by the
//! `utrace-clock` command (how small both are on this machine).

use std::collections::HashMap;

use crate::checks::SUBMIT_SLACK_NS;
use crate::checks::{assert_batches_match_within, assert_clean, device_batches, parse};
use crate::harness::{TempDir, Workload};
use crate::perfetto_trace::{self, Stage};
use crate::stage_ranges::{txt_ranges, Range};
use crate::trace_txt::Trace;
use crate::vk::{boottime_ns, monotonic_ns};

/// One run's figures, in ns.
#[derive(Clone, Debug)]
pub struct ClockRun {
    /// The largest mapping error over the run's ranges.
    pub max_error: u64,
    /// The bound the layer wrote into the trace.
    pub bound: u64,
    /// The rounds it says it kept ("gated rounds", "rounds around fences").
    pub rounds: String,
    /// The reference offset's own bracket.
    pub reference_bracket: u64,
    pub ranges: usize,
}

/// `CLOCK_BOOTTIME - CLOCK_MONOTONIC` from the tightest of 2,000 bracketed reads (monotonic,
/// boottime, monotonic; the read whose bracket is narrowest): the offset to within a few
/// tens of ns. Both clocks are system-wide, so this process's reads hold for the workload's.
fn reference_offset() -> (i64, u64) {
    (0..2_000)
        .map(|_| {
            let before = monotonic_ns();
            let boot = boottime_ns();
            let after = monotonic_ns();
            let mid = before + (after - before) / 2;
            (boot as i64 - mid as i64, after - before)
        })
        .min_by_key(|(_, width)| *width)
        .unwrap()
}

/// Each txt range's start on the device clock with the start of the Perfetto stage it is
/// (ranges of one submission and name, with the same arguments, in order).
fn paired_starts(txt: &Trace, stages: &[Stage]) -> Vec<(u64, u64)> {
    type Key = (u64, String, Vec<(String, String)>);
    let key = |r: &Range| (r.submission, r.name.clone(), r.args.clone());
    let names = perfetto_trace::stage_names();
    let mut boots: HashMap<Key, Vec<u64>> = HashMap::new();
    for s in stages {
        let k = (u64::from(s.submission), s.name.clone(), s.args.clone());
        boots.entry(k).or_default().push(s.boot_ns);
    }
    boots.values_mut().for_each(|v| v.sort_unstable());
    let mut ranges: Vec<Range> = txt
        .batches
        .iter()
        .flat_map(|b| txt_ranges(b, &names))
        .collect();
    ranges.sort_by_key(|r| r.gpu_ns);
    let mut taken: HashMap<Key, usize> = HashMap::new();
    let pairs: Vec<(u64, u64)> = ranges
        .iter()
        .map(|r| {
            let k = key(r);
            let i = taken.entry(k.clone()).or_default();
            let boot = boots.get(&k).and_then(|v| v.get(*i)).copied();
            *i += 1;
            (
                r.gpu_ns,
                boot.unwrap_or_else(|| panic!("no stage for {r:?}")),
            )
        })
        .collect();
    assert_eq!(pairs.len(), stages.len(), "one stage per range");
    pairs
}

/// The bound the layer wrote into the queue track's description ("... GPU clock measured
/// to within N ns").
fn written_bound(stages: &[Stage]) -> u64 {
    let description = &stages[0].queue_description;
    assert!(stages.iter().all(|s| &s.queue_description == description));
    description
        .split("GPU clock measured to within ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(" ns"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no bound in the queue's description: {description:?}"))
}

/// One run of the demo (`workload`: the `utrace-workload` binary) with the measured clock
/// (with `faults` injected beneath utrace, if any), checked: the run is clean, its
/// submissions are placed within the written bound, and every range's error is within it
/// too, give or take the reference's own bracket.
pub fn measured_run(workload: &str, faults: Option<&str>) -> ClockRun {
    let dir = TempDir::new("perfetto-clock");
    let file = dir.path().join("measured.pftrace");
    let mut w = Workload::new(workload, "demo")
        .env("GPU_TRACE_FORMAT", "txt,perfetto")
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .env("UTRACE_FORCE_MEASURED_CLOCK", "1")
        .env("UTRACE_LOG", "info");
    w = match faults {
        Some(faults) => w
            .layers(&[
                "VK_LAYER_utrace",
                "VK_LAYER_UTRACE_fault",
                "VK_LAYER_KHRONOS_validation",
            ])
            .env("UTRACE_FAULTS", faults),
        None => w.layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"]),
    };
    let run = w.run(&dir);
    assert_clean(&run);
    let txt: Trace = parse(&run.stdout);
    let trace = perfetto_trace::read(&file);
    let bound = written_bound(&trace.stages);
    // The batches as the workload made them; their submit times are placed by the measured
    // clock, so within its written bound (and the calibrated slack).
    assert_batches_match_within(
        &device_batches(&txt, 0),
        &run.report().devices[0].submissions,
        bound + SUBMIT_SLACK_NS,
    );
    let (offset, reference_bracket) = reference_offset();
    let max_error = paired_starts(&txt, &trace.stages)
        .iter()
        .map(|(gpu, boot)| (*boot as i64 - (*gpu as i64 + offset)).unsigned_abs())
        .max()
        .unwrap();
    let logged = format!("GPU clock measured against CLOCK_BOOTTIME to within {bound} ns (");
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains(&logged))
        .unwrap_or_else(|| panic!("{logged}: {}", run.stderr));
    let rounds = line.split(&logged).nth(1).unwrap().trim_end_matches(')');
    assert!(
        max_error <= bound + reference_bracket,
        "error {max_error} ns beyond the written bound {bound} ns (reference bracket {reference_bracket} ns)"
    );
    ClockRun {
        max_error,
        bound,
        rounds: rounds.to_string(),
        reference_bracket,
        ranges: trace.stages.len(),
    }
}
