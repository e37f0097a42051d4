//! The measured GPU clock (no calibrated timestamps) places Perfetto's events within the
//! bound it writes into the trace (see `utrace_tests::clock_truth` for how the truth is
//! known on Lavapipe). How small that bound gets depends on the machine (Lavapipe's device
//! is a CPU thread: a busy or slow machine widens every round), so the suite asserts only
//! what always holds, the error within the written bound; `utrace-clock` measures both.

use std::sync::Mutex;

use utrace_tests::clock_truth::measured_run;

/// One measuring test at a time: Lavapipe's device is a thread on the CPU, and a sibling
/// test's workload on the other core would take the core it needs and widen every round.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const WORKLOAD: &str = env!("CARGO_BIN_EXE_utrace-workload");

/// The gated rounds place every event within the bound they write, on whatever machine
/// (`measured_run` asserts it, for each range and each submission).
#[test]
fn the_measured_clock_places_events_within_its_written_bound() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let run = measured_run(WORKLOAD, None);
    assert_eq!(run.rounds, "gated rounds");
    println!(
        "measured clock: max mapping error {} ns over {} ranges, written bound {} ns (reference bracket {} ns)",
        run.max_error, run.ranges, run.bound, run.reference_bracket
    );
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
        let run = measured_run(WORKLOAD, Some(faults));
        assert_eq!(run.rounds, "rounds around fences", "{faults}");
        println!(
            "{faults}: error {} ns, bound {} ns",
            run.max_error, run.bound
        );
    }
}
