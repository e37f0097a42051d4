//! How far the measured GPU clock (no calibrated timestamps) puts Perfetto's events from
//! where they belong. Lavapipe's device clock is `CLOCK_MONOTONIC`, so the truth is known:
//! a range's device time plus the offset between `CLOCK_MONOTONIC` and `CLOCK_BOOTTIME`
//! (Perfetto's clock). Each range of the txt trace is paired with the Perfetto stage of the
//! same run, and the stage's start on BOOTTIME compared with that truth.

use std::collections::HashMap;
use std::sync::Mutex;

use utrace_tests::checks::{
    assert_batches_match_within, assert_clean, device_batches, parse, SUBMIT_SLACK_NS,
};
use utrace_tests::harness::TempDir;
use utrace_tests::perfetto_trace::{self, Stage};
use utrace_tests::stage_ranges::{txt_ranges, Range};
use utrace_tests::trace_txt::Trace;
use utrace_tests::vk::{boottime_ns, monotonic_ns};
use utrace_tests::workload;

/// One measuring test at a time, each with all its runs: Lavapipe's device is a thread on
/// the CPU, and a sibling test's workload on the other core would take the core it needs
/// (the gated rounds' windows, 3-3.6 µs alone, widened to 4-4.4 µs with the fenced test's
/// runs interleaved between the attempts, failing 1 binary run in 4 and once in CI).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The mapping error the measured clock must stay within, in ns.
const MAX_ERROR_NS: u64 = 2_000;

/// `CLOCK_BOOTTIME - CLOCK_MONOTONIC` from the tightest of 2,000 bracketed reads (monotonic,
/// boottime, monotonic; the read whose bracket is narrowest): the offset to within a few
/// tens of ns. Both clocks are system-wide, so the test process's reads hold for the
/// workload's.
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

/// One run of the demo with the measured clock (with `faults` injected beneath utrace, if
/// any): the largest mapping error over its ranges, the bound the layer wrote, in ns, and
/// the rounds it says it kept.
fn measured_run(faults: Option<&str>) -> (u64, u64, String) {
    let dir = TempDir::new("perfetto-clock");
    let file = dir.path().join("measured.pftrace");
    let mut w = workload!("demo")
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
    // The batches as the workload made them; their submit times are placed by the measured
    // clock, so within its written bound (and the calibrated slack).
    assert_batches_match_within(
        &device_batches(&txt, 0),
        &run.report().devices[0].submissions,
        written_bound(&trace.stages) + SUBMIT_SLACK_NS,
    );
    let (offset, bracket) = reference_offset();
    let max = paired_starts(&txt, &trace.stages)
        .iter()
        .map(|(gpu, boot)| (*boot as i64 - (*gpu as i64 + offset)).unsigned_abs())
        .max()
        .unwrap();
    let bound = written_bound(&trace.stages);
    println!(
        "measured clock: max mapping error {max} ns over {} ranges, written bound {bound} ns (reference bracket {bracket} ns)",
        trace.stages.len()
    );
    let logged = format!("GPU clock measured against CLOCK_BOOTTIME to within {bound} ns (");
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains(&logged))
        .unwrap_or_else(|| panic!("{logged}: {}", run.stderr));
    let rounds = line.split(&logged).nth(1).unwrap().trim_end_matches(')');
    // The written bound holds, give or take the reference's own bracket.
    assert!(
        max <= bound + bracket,
        "error {max} ns beyond the written bound {bound} ns"
    );
    (max, bound, rounds.to_string())
}

/// Lavapipe's device is a CPU thread: on a machine whose cores are all taken, it can share
/// one with the measuring thread and no round is tight (the written bound then says so).
/// Up to five runs; each must keep its bound, one must reach [`MAX_ERROR_NS`] (its error
/// and its bound).
#[test]
fn the_measured_clock_places_events_within_two_microseconds() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut errors = Vec::new();
    for _ in 0..5 {
        let (max, bound, rounds) = measured_run(None);
        assert_eq!(rounds, "gated rounds");
        errors.push((max, bound));
        if max <= MAX_ERROR_NS && bound <= MAX_ERROR_NS {
            return;
        }
    }
    panic!("(mapping error, bound) {errors:?} ns: above {MAX_ERROR_NS} ns");
}

/// Where the gated rounds cannot run (no event can be made; the first round's events cannot
/// be read, after its submission was let through), the clock is measured around fences,
/// and its wider bound is as true.
#[test]
fn without_gated_rounds_the_clock_is_measured_around_fences() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for faults in [
        "vkCreateEvent=out_of_host_memory",
        "vkGetEventStatus=device_lost",
    ] {
        let (max, bound, rounds) = measured_run(Some(faults));
        assert_eq!(rounds, "rounds around fences", "{faults}");
        println!("{faults}: error {max} ns, bound {bound} ns");
    }
}
