use std::sync::Arc;

use ash::vk::{self, Handle};

use super::{SubmitOrder, ORDER_ENTRIES};
use crate::gpu::interface::Backend;
use crate::trace::health::Health;
use crate::trace::record::chunk::ChunkPool;
use crate::trace::record::recorded_trace::{RecordedTrace, TraceParts};

fn pool() -> Arc<ChunkPool> {
    Arc::new(ChunkPool::new(Backend::inert(), Arc::new(Health::new(0))))
}

fn trace(pool: &Arc<ChunkPool>, cb: u64, one_time: bool) -> Arc<RecordedTrace> {
    let parts = TraceParts {
        cmd: vk::CommandBuffer::from_raw(cb),
        one_time,
        ..TraceParts::default()
    };
    Arc::new(RecordedTrace::new(parts, Arc::clone(pool)))
}

/// `expected`, as the queue's submitting thread asks it.
fn expected(order: &SubmitOrder, cb: u64) -> Option<Arc<RecordedTrace>> {
    // SAFETY: the tests' traces are held by the tests for as long as they are learnt.
    unsafe { order.expected(cb) }
}

fn learn(order: &SubmitOrder, cb: u64, trace: &Arc<RecordedTrace>) {
    // SAFETY: as above.
    unsafe { order.learn(cb, trace) }
}

/// Each of `cbs` submitted once, in order: found in the order, or looked up and learnt.
/// Returns how many were found.
fn round(order: &SubmitOrder, cbs: &[(u64, &Arc<RecordedTrace>)]) -> usize {
    let mut found = 0;
    for &(cb, trace) in cbs {
        match expected(order, cb) {
            Some(t) => {
                assert!(
                    Arc::ptr_eq(&t, trace),
                    "command buffer {cb:#x} found another trace"
                );
                found += 1;
            }
            None => learn(order, cb, trace),
        }
    }
    found
}

/// `cb` submitted twice in a row: learnt, then following itself.
fn learnt_after_itself(order: &SubmitOrder, cb: u64, trace: &Arc<RecordedTrace>) {
    order.forget_last();
    learn(order, cb, trace);
    learn(order, cb, trace);
}

#[test]
fn command_buffers_submitted_again_in_the_same_order_are_found_without_a_look_up() {
    let pool = pool();
    let (a, b, c) = (
        trace(&pool, 0xa, false),
        trace(&pool, 0xb, false),
        trace(&pool, 0xc, false),
    );
    let order = SubmitOrder::default();
    let cbs = [(0xa, &a), (0xb, &b), (0xc, &c)];
    assert_eq!(round(&order, &cbs), 0, "the first round learns them");
    // Nothing followed c yet: a is looked up, and found where it was learnt.
    assert_eq!(round(&order, &cbs), 2);
    assert_eq!(round(&order, &cbs), 3);
    assert_eq!(round(&order, &cbs), 3);
    assert_eq!(order.counts(), (8, 4));
    let held = Arc::strong_count(&a);
    let a_again = expected(&order, 0xa).expect("a follows c");
    assert_eq!(
        Arc::strong_count(&a),
        held + 1,
        "a found trace is a counted clone"
    );
    drop(a_again);
    assert_eq!(Arc::strong_count(&a), held);
}

#[test]
fn one_command_buffer_submitted_frame_after_frame_follows_itself() {
    let pool = pool();
    let a = trace(&pool, 0xa, false);
    let order = SubmitOrder::default();
    let found: Vec<usize> = (0..4).map(|_| round(&order, &[(0xa, &a)])).collect();
    assert_eq!(found, [0, 0, 1, 1]);
}

#[test]
fn a_changed_order_is_learnt() {
    let pool = pool();
    let t: Vec<_> = (1..=4).map(|cb| trace(&pool, cb, false)).collect();
    let order = SubmitOrder::default();
    let abcd = [(1, &t[0]), (2, &t[1]), (3, &t[2]), (4, &t[3])];
    let acbd = [(1, &t[0]), (3, &t[2]), (2, &t[1]), (4, &t[3])];
    round(&order, &abcd);
    assert_eq!(round(&order, &abcd), 3);
    assert_eq!(
        round(&order, &acbd),
        1,
        "only a (after d) follows as before"
    );
    assert_eq!(round(&order, &acbd), 4);
}

#[test]
fn a_recording_let_go_is_not_found_and_the_next_one_takes_its_entry() {
    let pool = pool();
    let (a, b) = (trace(&pool, 0xa, false), trace(&pool, 0xb, false));
    let order = SubmitOrder::default();
    round(&order, &[(0xa, &a), (0xb, &b)]);
    assert_eq!(round(&order, &[(0xa, &a), (0xb, &b)]), 1);
    // b is recorded again (its begin lets the last recording go): a new trace, the same
    // handle.
    b.forget_order();
    let b2 = trace(&pool, 0xb, false);
    assert_eq!(
        round(&order, &[(0xa, &a), (0xb, &b2)]),
        1,
        "a is found, the old recording of b never"
    );
    assert_eq!(round(&order, &[(0xa, &a), (0xb, &b2)]), 1);
    assert_eq!(round(&order, &[(0xa, &a), (0xb, &b2)]), 2, "the new one is");
    // A recording in the same trace (the cell reuses its allocation) takes its entry again.
    b2.forget_order();
    assert_eq!(round(&order, &[(0xa, &a), (0xb, &b2)]), 1);
    assert_eq!(round(&order, &[(0xa, &a), (0xb, &b2)]), 2);
}

#[test]
fn a_trace_learnt_on_another_queue_is_no_longer_found_on_the_first() {
    let pool = pool();
    let a = trace(&pool, 0xa, false);
    let (first, second) = (SubmitOrder::default(), SubmitOrder::default());
    learnt_after_itself(&first, 0xa, &a);
    assert!(expected(&first, 0xa).is_some());
    learnt_after_itself(&second, 0xa, &a);
    assert!(
        expected(&first, 0xa).is_none(),
        "a trace is in one order at a time: letting it go clears one entry"
    );
    assert!(expected(&second, 0xa).is_some());
    a.forget_order();
    assert!(expected(&second, 0xa).is_none());
}

#[test]
fn one_time_recordings_are_not_learnt() {
    let pool = pool();
    let once = trace(&pool, 0x1, true);
    let order = SubmitOrder::default();
    learnt_after_itself(&order, 0x1, &once);
    assert!(expected(&order, 0x1).is_none());
    assert_eq!(order.counts(), (0, 2));
}

#[test]
fn an_entry_taken_by_another_command_buffer_is_not_cleared_by_the_first() {
    let pool = pool();
    let a = trace(&pool, 0xa, false);
    let order = SubmitOrder::default();
    // a takes the first entry, others the rest, then b (the oldest entry: a's).
    learn(&order, 0xa, &a);
    for cb in 1..ORDER_ENTRIES as u64 {
        learn(&order, 0x100 + cb, &trace(&pool, 0x100 + cb, false));
    }
    let b = trace(&pool, 0xb, false);
    learnt_after_itself(&order, 0xb, &b);
    assert!(expected(&order, 0xb).is_some());
    a.forget_order();
    assert!(
        expected(&order, 0xb).is_some_and(|t| Arc::ptr_eq(&t, &b)),
        "letting a go leaves b's entry"
    );
}
