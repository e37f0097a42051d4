//! Where traceq's read of a run meets the application's submissions: an early read that
//! allocates nothing, and newer work waited for before a read under the run's lock
//! (`Quiet`), with fake queries.

use std::cell::Cell;

use super::tests::{armed, read_now, Fake};
use super::*;

/// A resubmission that reads its last run itself (traceq behind, the device idle) does so
/// into a list traceq gave the trace as it read a run the usual way: nothing allocated on
/// the submitting thread, even the first time. A trace traceq never read allocates then.
#[cfg(debug_assertions)]
#[test]
fn an_early_read_after_traceq_read_a_run_allocates_nothing_on_the_submitting_thread() {
    let count = crate::alloc_count::utrace_debug_allocations_on_this_thread;
    let early_read = |traceq_read_one_first: bool| {
        let (r, q) = (armed(), Fake::default());
        q.reads.borrow_mut().reserve(16);
        let mut out = [0; 4];
        assert_eq!(r.take(1, 4, &q), Taken::Armed);
        q.run(10);
        if traceq_read_one_first {
            r.read(1, &mut out, &q).unwrap();
        }
        assert_ne!(r.take(2, 4, &q), Taken::No);
        q.run(20);
        let before = count();
        assert!(read_now(r.take(3, 4, &q)));
        count() - before
    };
    assert_eq!(early_read(true), 0);
    assert!(
        early_read(false) > 0,
        "the contrast: a cold trace's early read allocates"
    );
}

/// A device that has newer work `busy` times when asked, counting the settles, with
/// `during` run at the first settle (what the application does meanwhile).
struct Busy<'a> {
    busy: Cell<u32>,
    settles: u32,
    during: Option<Box<dyn FnOnce() + 'a>>,
}

impl<'a> Busy<'a> {
    fn new(busy: u32, during: Option<Box<dyn FnOnce() + 'a>>) -> Busy<'a> {
        Busy {
            busy: Cell::new(busy),
            settles: 0,
            during,
        }
    }
}

impl Quiet for Busy<'_> {
    fn newer_work(&self) -> bool {
        self.busy.get() > 0
    }
    fn settle(&mut self) {
        self.busy.set(self.busy.get().saturating_sub(1));
        self.settles += 1;
        if let Some(during) = self.during.take() {
            during();
        }
    }
}

#[test]
fn newer_work_found_under_the_lock_is_waited_for_before_the_read() {
    let (r, q) = (armed(), Fake::default());
    assert_eq!(r.take(1, 2, &q), Taken::Armed);
    q.run(10);
    let mut busy = Busy::new(2, None);
    let mut out = [0; 2];
    r.read_settled(1, &mut out, &q, &mut busy).unwrap();
    assert_eq!((out, busy.settles, q.resets.get()), ([10; 2], 2, 1));
}

#[test]
fn a_device_that_never_idles_still_has_its_runs_read() {
    let (r, q) = (armed(), Fake::default());
    assert_eq!(r.take(1, 1, &q), Taken::Armed);
    q.run(10);
    let mut busy = Busy::new(u32::MAX, None);
    let mut out = [0; 1];
    r.read_settled(1, &mut out, &q, &mut busy).unwrap();
    assert_eq!(out, [10]);
    assert!(busy.settles > 0 && busy.settles <= 4, "{}", busy.settles);
}

#[test]
fn a_resubmission_while_traceq_settles_takes_the_run_and_traceq_finds_it() {
    let (r, q) = (armed(), Fake::default());
    assert_eq!(r.take(1, 1, &q), Taken::Armed);
    q.run(10);
    // The application resubmits while traceq waits for its newer work, without the lock:
    // the resubmission reads the last run itself.
    let resubmit = || {
        assert!(read_now(r.take(2, 1, &q)));
        q.run(20);
    };
    let mut busy = Busy::new(1, Some(Box::new(resubmit)));
    let mut out = [0; 1];
    r.read_settled(1, &mut out, &q, &mut busy).unwrap();
    assert_eq!((out, busy.settles), ([10], 1));
    r.read(2, &mut out, &q).unwrap();
    assert_eq!(out, [20]);
}
