//! Saves (devices whose query reads wait for all their work): a run left in the queries
//! at a resubmission is copied out by the GPU, never read on the host, with the fakes
//! of `tests`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk;

use super::tests::{race_traceq, read_now, Fake, FakeSaved, SharedFake};
use super::*;

/// A save prepared for submission `by` and made.
fn save(r: &Reruns<FakeSaved>, by: u64, saved: FakeSaved) {
    r.prepared(by, saved);
    r.made(by, ());
}

fn saving() -> Reruns<FakeSaved> {
    let mut r = Reruns::default();
    r.restart(true, true);
    r
}

/// What the layer's save does on the GPU once its submission runs: the queries' values
/// copied out, then the queries reset.
fn save_on_gpu(q: &Fake, finished: &Arc<AtomicU64>) -> FakeSaved {
    let value = q.value.get().expect("a written run");
    // SAFETY: a fake.
    unsafe { q.reset() };
    FakeSaved {
        value,
        finished: Arc::clone(finished),
    }
}

#[test]
fn where_reads_wait_a_resubmission_has_its_last_run_saved_never_read() {
    let (r, q) = (saving(), Fake::default());
    let finished = Arc::new(AtomicU64::new(0));
    assert_eq!(r.take(1, 2, &q), Taken::Armed);
    q.run(10);
    assert_eq!(r.take(2, 2, &q), Taken::Save);
    assert!(q.reads.borrow().is_empty(), "nothing read on the host");
    assert_eq!(
        q.resets.get(),
        0,
        "nor reset: the save resets them on the GPU"
    );
    save(&r, 2, save_on_gpu(&q, &finished));
    q.run(20);
    let mut out = [0; 2];
    r.read(1, &mut out, &q).unwrap();
    assert_eq!(out, [10, 10], "the last run, from its save");
    assert_eq!(finished.load(Ordering::Relaxed), 1);
    r.read(2, &mut out, &q).unwrap();
    assert_eq!(out, [20, 20], "the new run, from the queries");
    assert_eq!(r.take(3, 2, &q), Taken::Armed);
}

#[test]
fn traceq_waits_for_the_submission_that_saves_the_run_it_wants() {
    let (r, q) = (saving(), SharedFake::default());
    assert_eq!(r.take(1, 1, &q), Taken::Armed);
    q.value.store(10, Ordering::Release);
    assert_eq!(r.take(2, 1, &q), Taken::Save);
    let finished = Arc::new(AtomicU64::new(0));
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut out = [0; 1];
            r.read(1, &mut out, &q).map(|()| out[0])
        });
        // The submission is being made: traceq waits for it.
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            !reader.is_finished(),
            "traceq waits for the save to be made"
        );
        let saved = FakeSaved {
            value: q.value.swap(0, Ordering::AcqRel),
            finished: Arc::clone(&finished),
        };
        save(&r, 2, saved);
        assert_eq!(reader.join().unwrap(), Ok(10));
    });
}

/// Run 1 (value 10) left in the queries, and submission 2 about to save it with a copy
/// whose resources count in the result.
fn save_of_run_1_prepared(r: &Reruns<FakeSaved>, q: &Fake) -> Arc<AtomicU64> {
    let finished = Arc::new(AtomicU64::new(0));
    assert_eq!(r.take(1, 1, q), Taken::Armed);
    q.run(10);
    assert_eq!(r.take(2, 1, q), Taken::Save);
    let copy = FakeSaved {
        value: 0,
        finished: Arc::clone(&finished),
    };
    r.prepared(2, copy);
    finished
}

#[test]
fn a_submission_that_was_to_save_a_run_and_failed_leaves_it_in_the_queries() {
    let (r, q) = (saving(), Fake::default());
    let finished = save_of_run_1_prepared(&r, &q);
    r.not_submitted(2);
    assert_eq!(
        finished.load(Ordering::Relaxed),
        3,
        "the copy's resources back"
    );
    let mut out = [0; 1];
    r.read(1, &mut out, &q).unwrap();
    assert_eq!(out, [10], "read where it still is");
    assert_eq!(r.take(3, 1, &q), Taken::Armed, "and armed again");
}

#[test]
fn a_submission_that_was_to_save_a_run_and_went_down_untimed_reads_it_first() {
    // The layer could not prepare submission 2, which was to save run 1: the application's
    // batch goes down as it was and overwrites the queries, so run 1 is read on the host
    // before it, and the queries are reset again by the submission after.
    let (r, q) = (saving(), Fake::default());
    let finished = save_of_run_1_prepared(&r, &q);
    r.ran_untimed(2, 1, &q);
    assert_eq!(
        finished.load(Ordering::Relaxed),
        3,
        "the copy's resources back"
    );
    q.run(20);
    let mut out = [0; 1];
    r.read(1, &mut out, &q).unwrap();
    assert_eq!(out, [10], "read on the host before the untimed run");
    assert_eq!(r.take(3, 1, &q), Taken::Armed);
    assert_eq!(q.resets.get(), 2, "after the host read, and before run 3");
}

#[test]
fn where_reads_wait_even_an_idle_device_has_the_last_run_saved() {
    // Lavapipe's read is a round trip to its queue thread even when nothing is in flight
    // (26 us a resubmission, against 3 us for a save): where reads wait, a resubmission
    // never reads. Where they do not, it reads (cheap on a GPU's mapped memory).
    let (r, q) = (saving(), Fake::default());
    assert_eq!(r.take(1, 1, &q), Taken::Armed);
    q.run(10);
    assert_eq!(r.take(2, 1, &q), Taken::Save);
    let mut reading = Reruns::<FakeSaved>::default();
    reading.restart(true, false);
    let q = Fake::default();
    assert_eq!(reading.take(1, 1, &q), Taken::Armed);
    q.run(10);
    assert!(read_now(reading.take(2, 1, &q)));
    q.run(20);
    let mut out = [0; 1];
    reading.read(1, &mut out, &q).unwrap();
    assert_eq!(out, [10]);
}

#[test]
fn a_save_that_cannot_be_had_reads_the_run_on_the_host_instead() {
    let (r, q) = (saving(), Fake::default());
    assert_eq!(r.take(1, 1, &q), Taken::Armed);
    q.run(10);
    assert_eq!(r.take(2, 1, &q), Taken::Save);
    r.read_instead_of_saving(2, 1, &q);
    assert_eq!(q.resets.get(), 1, "read and reset on the host");
    q.run(20);
    let mut out = [0; 1];
    r.read(1, &mut out, &q).unwrap();
    assert_eq!(out, [10]);
    r.read(2, &mut out, &q).unwrap();
    assert_eq!(out, [20]);
}

#[test]
fn a_saved_run_not_written_only_gives_its_resources_back() {
    let (r, q) = (saving(), Fake::default());
    let finished = Arc::new(AtomicU64::new(0));
    assert_eq!(r.take(1, 1, &q), Taken::Armed);
    q.run(10);
    assert_eq!(r.take(2, 1, &q), Taken::Save);
    save(&r, 2, save_on_gpu(&q, &finished));
    r.discard(1, &q);
    assert_eq!(
        finished.load(Ordering::Relaxed),
        2,
        "finished without values"
    );
    let mut out = [0; 1];
    assert_eq!(r.read(1, &mut out, &q), Err(vk::Result::NOT_READY), "gone");
}

#[test]
fn where_reads_wait_resubmissions_racing_traceq_read_each_run_once_with_its_values() {
    // A resubmission that saves the run while traceq is about to read it (and whose run
    // then writes the queries) must not make traceq take the new values.
    let (r, q) = (saving(), SharedFake::default());
    let finished = Arc::new(AtomicU64::new(0));
    let saves = AtomicU64::new(0);
    race_traceq(&r, &q, 20_000, |s| match r.take(s, 1, &q) {
        // traceq read it, perhaps while this waited for the lock.
        Taken::Armed | Taken::ArmedAfterWait { .. } => {}
        Taken::Save => {
            saves.fetch_add(1, Ordering::Relaxed);
            let saved = FakeSaved {
                value: q.value.swap(0, Ordering::AcqRel),
                finished: Arc::clone(&finished),
            };
            save(&r, s, saved);
        }
        other => panic!("run {s}: {other:?}"),
    });
    assert!(saves.load(Ordering::Relaxed) > 0, "some runs were saved");
}
