use std::cell::Cell;

use ash::vk::Handle;

use super::*;
use crate::gpu::interface::{Backend, CHUNK_QUERIES};
use crate::trace::health::Health;
use crate::trace::record::chunk::ChunkPool;
use crate::trace::record::recorded_trace::{Child, NoWait, TraceParts};
use crate::trace::sink_interface::EventPieces;
use crate::trace::traceq::events::{self, BatchEvents};

/// A trace of `draws` draws in a render pass (`2 draws + 4` queries, see
/// [`events::tests::parts`]), one-time, its queries in chunks of [`CHUNK_QUERIES`] numbered
/// from `first_pool`, with `children` executed after its first event.
fn trace(draws: u32, first_pool: u64, children: Vec<Child>) -> Arc<RecordedTrace> {
    let chunks = Arc::new(ChunkPool::new(Backend::inert(), Arc::new(Health::new(0))));
    Arc::new(RecordedTrace::new(
        parts(draws, first_pool, children),
        chunks,
    ))
}

fn parts(draws: u32, first_pool: u64, children: Vec<Child>) -> TraceParts {
    let mut parts = events::tests::parts(draws, children);
    parts.one_time = true;
    let mut slot = 0;
    let mut pool = first_pool;
    while slot < parts.slots {
        let count = CHUNK_QUERIES.min(parts.slots - slot);
        parts.copies.push(CopyRange {
            pool: vk::QueryPool::from_raw(pool),
            first: 0,
            count,
            slot,
            values: 1,
        });
        slot += count;
        pool += 1;
    }
    parts
}

/// The stand-in device's value of query `first + i` of pool `p`.
fn value(pool: vk::QueryPool, query: u32) -> u64 {
    pool.as_raw() * 1_000_000 + u64::from(query)
}

/// Reads as the device would, counting the reads; fails every read from the `fail_from`th.
fn reader<'c>(
    reads: &'c Cell<u32>,
    fail_from: u32,
) -> impl FnMut(&RecordedTrace, &CopyRange, &mut [u64]) -> Result<(), vk::Result> + 'c {
    move |_, copy, out| {
        reads.set(reads.get() + 1);
        if reads.get() >= fail_from {
            return Err(vk::Result::ERROR_DEVICE_LOST);
        }
        for (i, v) in out.iter_mut().enumerate() {
            *v = value(copy.pool, copy.first + i as u32);
        }
        Ok(())
    }
}

/// The timestamps of `traces` (submission `submission`) read by [`reader`], nothing to wait
/// for first.
fn read_with<'a, 's, 'c>(
    (traces, submission): (&'a [Arc<RecordedTrace>], u64),
    scratch: &'s mut QueryScratch,
    reads: &'c Cell<u32>,
    fail_from: u32,
) -> Result<QueryTimestamps<'a, 's, impl ReadCopy + 'c>, vk::Result> {
    QueryTimestamps::new(
        (traces, submission),
        scratch,
        reader(reads, fail_from),
        &mut NoWait,
    )
}

/// The events' times, in execution order, as a sink reads them.
fn times<'a>(events: &mut impl EventPieces<'a>) -> Vec<u64> {
    let mut got = Vec::new();
    events.each_piece(&mut |piece| got.extend(piece.iter().map(|e| e.ns)));
    got
}

/// A primary (pools from 1) that executed a secondary (pools from 100): its events in
/// execution order take their values from the right chunks, and a batch of a few chunks is
/// read once whatever the readings.
#[test]
fn each_event_takes_its_own_query_and_a_small_batch_is_read_once() {
    let child = trace(20, 100, Vec::new());
    let primary = trace(
        40,
        1,
        vec![Child {
            position: 1,
            trace: Arc::clone(&child),
        }],
    );
    let traces = [primary];
    let reads = Cell::new(0);
    let mut scratch = QueryScratch::default();
    let values = read_with((&traces, 1), &mut scratch, &reads, u32::MAX).unwrap();
    let mut events = BatchEvents::new(&traces, values, |raw| raw);
    // The primary's first event, the child's 44, then the primary's 83 others.
    let at = |pool: u64, slot: u32| {
        let (chunk, query) = (slot / CHUNK_QUERIES, slot % CHUNK_QUERIES);
        value(vk::QueryPool::from_raw(pool + u64::from(chunk)), query)
    };
    let expected: Vec<u64> = std::iter::once(at(1, 0))
        .chain((0..44).map(|s| at(100, s)))
        .chain((1..84).map(|s| at(1, s)))
        .collect();
    assert_eq!(
        events.first_last_ns(),
        (expected[0], *expected.last().unwrap())
    );
    assert_eq!(times(&mut events), expected);
    assert_eq!(times(&mut events), expected, "a second sink reads the same");
    assert_eq!(events.unread, 0);
    // Two chunks of the primary's, one of the child's: each read once.
    assert_eq!(reads.get(), 3);
}

/// The bytes held at most while a one-chunk-per-64-queries batch of `draws` draws is read
/// and its events made twice, beyond what was held before.
fn peak_reading(draws: u32) -> i64 {
    let traces = [trace(draws, 1, Vec::new())];
    let reads = Cell::new(0);
    let mut scratch = QueryScratch::default();
    // Room a first batch leaves the scratch.
    let warm = read_with((&traces, 1), &mut scratch, &reads, u32::MAX);
    drop(warm);
    let before = crate::alloc_count::reset_peak();
    let values = read_with((&traces, 1), &mut scratch, &reads, u32::MAX).unwrap();
    let mut events = BatchEvents::new(&traces, values, |raw| raw);
    let mut n = 0u64;
    for _ in 0..2 {
        events.each_piece(&mut |piece| n += piece.len() as u64);
    }
    assert_eq!(n, 2 * (2 * u64::from(draws) + 4));
    crate::alloc_count::peak() - before
}

/// Reading a batch left in its queries never holds the batch's values: a million events
/// take no more memory than a few thousand (8 MB listed whole).
#[test]
fn reading_queries_holds_a_few_chunks_whatever_the_batch() {
    let small = peak_reading(2_000);
    let large = peak_reading(500_000);
    assert!(small < 64 * 1024, "{small} bytes for 4,004 events");
    assert!(
        large <= small,
        "{large} bytes for 1,000,004 events, {small} for 4,004"
    );
}

/// A batch whose first chunks cannot be read is refused before any event goes; a read that
/// fails later (never expected) leaves its events out and says so.
#[test]
fn a_failed_read_drops_the_batch_before_or_its_events_after() {
    let traces = [trace(1_000, 1, Vec::new())];
    let reads = Cell::new(0);
    let mut scratch = QueryScratch::default();
    let refused = read_with((&traces, 1), &mut scratch, &reads, WINDOWS as u32 - 1);
    assert_eq!(refused.err(), Some(vk::Result::ERROR_DEVICE_LOST));

    let reads = Cell::new(0);
    // Three chunks read before any event goes, the last one for the batch's last time,
    // then chunks 3 to 7; the reads fail from the tenth.
    let values = read_with((&traces, 1), &mut scratch, &reads, 10).unwrap();
    let mut events = BatchEvents::new(&traces, values, |raw| raw);
    let got = times(&mut events);
    // The events of the eight chunks read go, the rest are left out and counted.
    assert_eq!(got.len() as u32, 8 * CHUNK_QUERIES, "{} events", got.len());
    assert_eq!(events.unread, 2004 - got.len() as u64);
}

/// A batch of many chunks reads each of them once, as its events reach them, and the last
/// once more for the batch's last time, which the sinks ask for first (on Lavapipe
/// each read costs 40 ns a query: reading them all first, then again, doubled traceq's
/// time on a large one-time command buffer).
#[test]
fn a_large_batch_reads_each_chunk_once() {
    let traces = [trace(10_000, 1, Vec::new())];
    let chunks = traces[0].copies.len() as u32;
    assert!(chunks > 4 * WINDOWS as u32, "{chunks} chunks");
    let reads = Cell::new(0);
    let mut scratch = QueryScratch::default();
    let values = read_with((&traces, 1), &mut scratch, &reads, u32::MAX).unwrap();
    let mut events = BatchEvents::new(&traces, values, |raw| raw);
    let at = |slot: u32| {
        let (chunk, query) = (slot / CHUNK_QUERIES, slot % CHUNK_QUERIES);
        value(vk::QueryPool::from_raw(1 + u64::from(chunk)), query)
    };
    let expected: Vec<u64> = (0..20_004).map(at).collect();
    assert_eq!(times(&mut events), expected);
    assert_eq!(events.unread, 0);
    assert_eq!(reads.get(), chunks + 1);
}

/// The scratch a batch leaves holds nothing the next batch reads: a value the next batch
/// cannot find (here, queries it has no copy of) is not taken from the last one's.
#[test]
fn a_batch_never_reads_the_last_batchs_values() {
    let mut scratch = QueryScratch::default();
    let reads = Cell::new(0);
    let first = [trace(100, 1, Vec::new())];
    let values = read_with((&first, 1), &mut scratch, &reads, u32::MAX).unwrap();
    assert_eq!(
        times(&mut BatchEvents::new(&first, values, |raw| raw)).len(),
        204
    );
    let mut uncopied = parts(2, 500, Vec::new());
    uncopied.copies.clear();
    let chunks = Arc::new(ChunkPool::new(Backend::inert(), Arc::new(Health::new(0))));
    let second = [Arc::new(RecordedTrace::new(uncopied, chunks))];
    let values = read_with((&second, 2), &mut scratch, &reads, u32::MAX).unwrap();
    let mut events = BatchEvents::new(&second, values, |raw| raw);
    assert_eq!(times(&mut events), Vec::<u64>::new());
    assert_eq!(events.unread, 8);
}
