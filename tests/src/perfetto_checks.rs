//! What a decoded Perfetto trace (`perfetto_trace`) must hold whatever the workload: each
//! stage inside its submission's CPU window and after its `vkQueueSubmit`, stages nested
//! within a command buffer's run and inside their render pass, and clock snapshots at the
//! clocks' true offset.

use crate::perfetto_trace::{self, Resolved, Stage};
use crate::report::Submission;

/// The workload's submission that the Perfetto submit `boot_ns` with `cmdbufs` was.
pub fn report_submission<'a>(
    subs: &'a [Submission],
    cmdbufs: &[u64],
    boot_ns: u64,
    boot_minus_mono: i64,
) -> &'a Submission {
    let mono = (boot_ns as i64 - boot_minus_mono) as u64;
    let names: Vec<String> = cmdbufs.iter().map(|c| format!("{c:#x}")).collect();
    subs.iter()
        .find(|s| s.cmdbufs == names && s.cpu_before_ns <= mono && mono <= s.cpu_after_ns)
        .unwrap_or_else(|| panic!("no submission of {names:?} around {mono}: {subs:#?}"))
}

/// Every stage inside the CPU window of the submission it belongs to, on BOOTTIME, to
/// within `slack` ns (the clock pairing's uncertainty).
pub fn assert_inside_submissions(trace: &Resolved, subs: &[Submission], slack: u64) {
    let offset = perfetto_trace::boottime_minus_monotonic();
    assert!(!trace.submits.is_empty());
    for submit in &trace.submits {
        let sub = report_submission(subs, &submit.command_buffers, submit.boot_ns, offset);
        let (lo, hi) = (
            (sub.cpu_before_ns as i64 + offset) as u64 - slack,
            (sub.cpu_after_ns as i64 + offset) as u64 + slack,
        );
        assert!(submit.pid > 0 && submit.tid > 0, "{submit:?}");
        assert!(submit.boot_ns + submit.duration_ns <= hi, "{submit:?}");
        let stages: Vec<&Stage> = trace
            .stages
            .iter()
            .filter(|s| s.submission == submit.submission && s.sequence == submit.sequence)
            .collect();
        assert!(
            !stages.is_empty(),
            "submission {} has stages",
            submit.submission
        );
        for s in stages {
            assert!(
                lo <= s.boot_ns && s.boot_ns + s.duration <= hi,
                "{} [{}, +{}] outside its submission's CPU window [{lo}, {hi}] ({})",
                s.name,
                s.boot_ns,
                s.duration,
                sub.label
            );
            assert!(
                submit.boot_ns <= s.boot_ns + slack,
                "{} starts before its vkQueueSubmit",
                s.name
            );
        }
    }
}

/// Within a command buffer's run, two stages nest or are apart; a stage in a render pass
/// lies inside that render pass.
pub fn assert_children_inside_parents(trace: &Resolved) {
    let stages = &trace.stages;
    for a in stages {
        for b in stages {
            if a.submission != b.submission || a.command_buffer != b.command_buffer {
                continue;
            }
            let (a0, a1, b0, b1) = (
                a.gpu_ns,
                a.gpu_ns + a.duration,
                b.gpu_ns,
                b.gpu_ns + b.duration,
            );
            let apart = a1 <= b0 || b1 <= a0;
            let nested = (a0 <= b0 && b1 <= a1) || (b0 <= a0 && a1 <= b1);
            assert!(apart || nested, "{a:#?} overlaps {b:#?}");
        }
        if a.render_pass != 0 && a.name != "Render Pass" {
            let pass = stages
                .iter()
                .find(|p| {
                    p.name == "Render Pass"
                        && p.render_pass == a.render_pass
                        && p.submission == a.submission
                        && p.gpu_ns <= a.gpu_ns
                        && a.gpu_ns + a.duration <= p.gpu_ns + p.duration
                })
                .map(|p| p.name.clone());
            assert!(pass.is_some(), "{} outside its render pass", a.name);
        }
    }
}

/// Every clock snapshot pairs the GPU clock (CLOCK_MONOTONIC on Lavapipe) with BOOTTIME at
/// the clocks' true offset, to within `tolerance` ns. The callers' 200 µs is a thousand
/// times a calibrated pair's error (the tightest of 4 to 16 bracketed reads): a busy
/// machine that preempts a read leaves the others, and a slow one reads no wider.
pub fn assert_snapshots_true(trace: &Resolved, tolerance: u64) {
    let offset = perfetto_trace::boottime_minus_monotonic();
    assert!(!trace.snapshots.is_empty());
    for (gpu, boot) in &trace.snapshots {
        let error = (*boot as i64 - *gpu as i64 - offset).unsigned_abs();
        assert!(
            error <= tolerance,
            "snapshot ({gpu}, {boot}) off by {error} ns"
        );
    }
}
