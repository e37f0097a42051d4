//! The states of a reusable trace's queries between its runs, with fake queries (the
//! saves of devices whose reads wait: `save_tests`).

use super::early_runs::EARLY_VALUES;
use super::*;
use std::cell::{Cell, RefCell};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Queries that hold `value` in every slot once written, and count resets.
#[derive(Default)]
pub(super) struct Fake {
    pub(super) value: Cell<Option<u64>>,
    pub(super) resets: Cell<u32>,
    pub(super) reads: RefCell<Vec<u64>>,
}

impl Fake {
    pub(super) fn run(&self, value: u64) {
        assert_eq!(self.value.get(), None, "written only when reset");
        self.value.set(Some(value));
    }
}

impl RunQueries for Fake {
    fn read(&self, out: &mut [u64]) -> Result<(), vk::Result> {
        let v = self.value.get().ok_or(vk::Result::NOT_READY)?;
        out.fill(v);
        self.reads.borrow_mut().push(v);
        Ok(())
    }
    unsafe fn reset(&self) {
        self.value.set(None);
        self.resets.set(self.resets.get() + 1);
    }
}

pub(super) fn read_now(taken: Taken) -> bool {
    matches!(taken, Taken::ReadNow { .. })
}

pub(super) fn armed() -> Reruns<FakeSaved> {
    let mut r = Reruns::default();
    r.restart(true, false);
    r
}

#[test]
fn a_run_read_by_traceq_arms_the_next() {
    let (r, q) = (armed(), Fake::default());
    assert_ne!(r.take(1, 2, &q), Taken::No);
    q.run(10);
    let mut out = [0; 2];
    r.read(1, &mut out, &q).unwrap();
    assert_eq!(out, [10, 10]);
    assert_eq!(q.resets.get(), 1, "traceq reset them");
    assert_eq!(r.take(2, 2, &q), Taken::Armed, "armed again");
    assert_eq!(
        q.reads.borrow().len(),
        1,
        "nothing read at the resubmission"
    );
}

#[test]
fn a_run_that_went_down_untimed_is_reset_by_the_next_submission() {
    // The layer could not prepare submission 2: the application's batch ran as it was,
    // writing the queries, and no batch of the layer's reads them.
    let (r, q) = (armed(), Fake::default());
    assert_eq!(r.take(1, 2, &q), Taken::Armed);
    q.run(10);
    let mut out = [0; 2];
    r.read(1, &mut out, &q).unwrap();
    assert_eq!(r.take(2, 2, &q), Taken::Armed);
    r.ran_untimed(2, 2, &q);
    q.run(20);
    assert_eq!(r.phase(), Phase::Untimed);
    // The next submission (which Vulkan made wait for that run) resets them first.
    assert_eq!(r.take(3, 2, &q), Taken::Armed);
    assert_eq!(
        q.resets.get(),
        2,
        "traceq's reset after run 1, then this one"
    );
    q.run(30);
    r.read(3, &mut out, &q).unwrap();
    assert_eq!(out, [30, 30]);
    assert_eq!(q.reads.borrow().as_slice(), [10, 30], "run 2 never read");
}

#[test]
fn an_untimed_run_after_a_wrapped_one_still_has_its_queries_reset() {
    // A wrapped run's copy resets the queries; an untimed run after it writes them again:
    // traceq arming the trace when it sees the copy must not hide that.
    let (r, q) = (armed(), Fake::default());
    r.wrapped(1);
    r.ran_untimed(2, 2, &q);
    r.copied(1);
    assert_eq!(r.phase(), Phase::Untimed);
    q.run(20);
    assert_eq!(r.take(3, 2, &q), Taken::Armed);
    assert_eq!(q.resets.get(), 1);
}

#[test]
fn phases_survive_their_encoding() {
    for phase in [
        Phase::Armed,
        Phase::Unknown,
        Phase::Untimed,
        Phase::InQueries(1),
        Phase::InQueries(u64::MAX >> 2),
        Phase::Copying(7),
    ] {
        assert_eq!(Phase::decode(phase.encode()), phase);
    }
}

#[test]
fn a_resubmission_before_traceq_reads_the_last_run_for_it() {
    let (r, q) = (armed(), Fake::default());
    for (submission, value) in [(1, 10), (2, 20), (3, 30)] {
        let taken = r.take(submission, 2, &q);
        if submission == 1 {
            assert_eq!(taken, Taken::Armed);
        } else {
            assert!(read_now(taken), "run {submission} needs no copy: {taken:?}");
        }
        q.run(value);
    }
    // traceq comes now, in order: the first two were read early, the last is in place.
    for (submission, value) in [(1, 10), (2, 20), (3, 30)] {
        let mut out = [0; 2];
        r.read(submission, &mut out, &q).unwrap();
        assert_eq!(out, [value; 2], "run {submission}");
    }
    assert_ne!(r.take(4, 2, &q), Taken::No);
}

#[test]
fn traceq_finds_an_early_run_whatever_the_order() {
    let (r, q) = (armed(), Fake::default());
    for (submission, value) in [(1, 10), (2, 20)] {
        assert_ne!(r.take(submission, 1, &q), Taken::No);
        q.run(value);
    }
    assert_ne!(r.take(3, 1, &q), Taken::No);
    q.run(30);
    let mut out = [0; 1];
    r.read(2, &mut out, &q).unwrap();
    assert_eq!(out, [20]);
    r.read(1, &mut out, &q).unwrap();
    assert_eq!(out, [10]);
    assert_eq!(r.read(1, &mut out, &q), Err(vk::Result::NOT_READY), "once");
}

#[test]
fn a_wrapped_run_is_not_armed_until_its_copy_completed() {
    let (r, q) = (armed(), Fake::default());
    assert_ne!(r.take(1, 1, &q), Taken::No);
    r.wrapped(1);
    assert_eq!(r.take(2, 1, &q), Taken::No, "the copy may not have run yet");
    r.wrapped(2);
    r.copied(1);
    assert_eq!(
        r.take(3, 1, &q),
        Taken::No,
        "an older copy says nothing of the last"
    );
    r.wrapped(3);
    r.copied(3);
    assert_ne!(r.take(4, 1, &q), Taken::No);
}

#[test]
fn a_failed_submission_leaves_the_queries_armed() {
    let (r, q) = (armed(), Fake::default());
    assert_ne!(r.take(1, 1, &q), Taken::No);
    r.not_submitted(1);
    assert_ne!(r.take(2, 1, &q), Taken::No);
    r.not_submitted(2);
    assert_ne!(r.take(3, 1, &q), Taken::No);
    r.wrapped(3);
    r.not_submitted(3);
    assert_eq!(r.take(4, 1, &q), Taken::No, "a failed wrapped run: unknown");
}

#[test]
fn an_unread_run_not_written_is_discarded_and_rearmed() {
    let (r, q) = (armed(), Fake::default());
    assert_ne!(r.take(1, 1, &q), Taken::No);
    q.run(10);
    r.discard(1, &q);
    assert_ne!(r.take(2, 1, &q), Taken::No);
    assert!(q.reads.borrow().is_empty());
    q.run(20);
    assert!(read_now(r.take(3, 1, &q)));
    r.discard(2, &q);
    let mut out = [0; 1];
    assert_eq!(r.read(2, &mut out, &q), Err(vk::Result::NOT_READY));
}

#[test]
fn a_run_not_complete_at_its_resubmission_is_lost_not_misread() {
    let (r, q) = (armed(), Fake::default());
    assert_ne!(r.take(1, 1, &q), Taken::No);
    // The application broke the rule: its run has not written yet.
    assert_ne!(r.take(2, 1, &q), Taken::No);
    let mut out = [0; 1];
    assert_eq!(r.read(1, &mut out, &q), Err(vk::Result::NOT_READY));
}

#[test]
fn a_failed_read_at_resubmission_reaches_traceq_with_its_error() {
    struct Lost;
    impl RunQueries for Lost {
        fn read(&self, _: &mut [u64]) -> Result<(), vk::Result> {
            Err(vk::Result::ERROR_DEVICE_LOST)
        }
        unsafe fn reset(&self) {}
    }
    let r = armed();
    assert_eq!(r.take(1, 1, &Lost), Taken::Armed);
    assert!(read_now(r.take(2, 1, &Lost)));
    let mut out = [0; 1];
    assert_eq!(
        r.read(1, &mut out, &Lost),
        Err(vk::Result::ERROR_DEVICE_LOST)
    );
}

#[test]
fn a_resubmission_that_reads_its_last_run_says_how_long_it_waited() {
    /// Queries whose read takes as long as the driver's that waits for the device.
    #[derive(Default)]
    struct Slow(Fake);
    impl RunQueries for Slow {
        fn read(&self, out: &mut [u64]) -> Result<(), vk::Result> {
            std::thread::sleep(std::time::Duration::from_millis(3));
            self.0.read(out)
        }
        unsafe fn reset(&self) {
            // SAFETY: forwarded.
            unsafe { self.0.reset() }
        }
    }
    let (r, q) = (armed(), Slow::default());
    assert_eq!(r.take(1, 1, &q), Taken::Armed, "nothing to read");
    q.0.run(10);
    match r.take(2, 1, &q) {
        Taken::ReadNow { waited_ns } => assert!(waited_ns >= 3_000_000, "{waited_ns} ns"),
        other => panic!("read now, not {other:?}"),
    }
    let mut out = [0; 1];
    r.read(1, &mut out, &q).unwrap();
    assert_eq!(out, [10], "the slow read's values kept for traceq");
}

#[test]
fn untracked_traces_are_never_armed_and_early_runs_are_bounded() {
    let mut r: Reruns<FakeSaved> = Reruns::default();
    let q = Fake::default();
    assert_eq!(r.take(1, 1, &q), Taken::No);
    r.restart(true, false);
    let slots = 1024;
    let most = EARLY_VALUES / slots;
    for s in 1..=(most as u64 + 2) {
        assert_ne!(r.take(s, slots, &q), Taken::No);
        q.run(s);
    }
    let early = r.reads.lock().len();
    assert_eq!(early, most);
    let mut out = vec![0; slots];
    assert!(r.read(1, &mut out, &q).is_err(), "the oldest was dropped");
    r.read(2, &mut out, &q).unwrap();
    assert_eq!(out, vec![2; slots]);
}

/// Queries shared by two threads: 0 when reset, else the run's value.
#[derive(Default)]
pub(super) struct SharedFake {
    pub(super) value: AtomicU64,
}

impl RunQueries for SharedFake {
    fn read(&self, out: &mut [u64]) -> Result<(), vk::Result> {
        match self.value.load(Ordering::Acquire) {
            0 => Err(vk::Result::NOT_READY),
            v => {
                out.fill(v);
                Ok(())
            }
        }
    }
    unsafe fn reset(&self) {
        self.value.store(0, Ordering::Release);
    }
}

#[test]
fn resubmissions_racing_traceq_read_each_run_once_with_its_values() {
    // The phase is taken without the lock when armed: a submitting thread and traceq
    // working on the same trace at once must still read every run exactly once.
    let (r, q) = (armed(), SharedFake::default());
    let runs = 20_000u64;
    race_traceq(&r, &q, runs, |s| {
        assert_ne!(r.take(s, 1, &q), Taken::No, "run {s}");
    });
    assert_eq!(
        r.take(runs + 1, 1, &q),
        Taken::Armed,
        "the last run was read by traceq"
    );
}

/// `runs` runs of `q`'s trace, each taken by `take` then written, on a submitting thread,
/// while this thread reads each as traceq does (falling behind by a few runs at most:
/// their values wait in `early`), checking every run is read once with its own values.
pub(super) fn race_traceq(
    r: &Reruns<FakeSaved>,
    q: &SharedFake,
    runs: u64,
    take: impl Fn(u64) + Send + Sync,
) {
    let (submitted, read) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for s in 1..=runs {
                take(s);
                // The run writes its queries (reset, as taking them promised).
                let before = q.value.swap(s, Ordering::AcqRel);
                assert_eq!(before, 0, "run {s} on written queries");
                submitted.store(s, Ordering::Release);
                while s > read.load(Ordering::Acquire) + 32 {
                    std::thread::yield_now();
                }
            }
        });
        for s in 1..=runs {
            while submitted.load(Ordering::Acquire) < s {
                std::hint::spin_loop();
            }
            let mut out = [0; 1];
            r.read(s, &mut out, q).unwrap();
            assert_eq!(out, [s], "run {s} read with its own values");
            read.store(s, Ordering::Release);
        }
    });
}

/// A run saved by the "GPU": its value, and how it was finished (1: read, 2: only given
/// back).
pub(super) struct FakeSaved {
    pub(super) value: u64,
    pub(super) finished: Arc<AtomicU64>,
}

impl SavedRun for FakeSaved {
    type Completion = ();

    fn made(&mut self, (): ()) {}

    fn finish(self, out: Option<&mut [u64]>) -> Result<(), vk::Result> {
        let how = match out {
            Some(out) => {
                out.fill(self.value);
                1
            }
            None => 2,
        };
        self.finished.store(how, Ordering::Relaxed);
        Ok(())
    }

    fn unused(self) {
        self.finished.store(3, Ordering::Relaxed);
    }
}
