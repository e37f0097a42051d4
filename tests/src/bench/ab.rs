//! The in-process A/B of one mode: three devices on the same driver in one process, A and
//! A' without the layer and B with it, the same work alternated between them over many
//! rounds (the order rotating each round). B/A is the layer's cost; A'/A is the noise floor.

use ash::vk;
use serde_json::{json, Value};

use super::arena::ArenaPool;
use super::rows::{self, SUBMITS, THREADS};
use super::rows_submits::{self, SubmitKinds};
use super::side::Side;
use super::stats::Series;
use crate::vk::Result;

/// One row's figures over the rounds.
#[derive(Default)]
pub struct RowResult {
    /// Per command (or submission) on A, A' and B, in nanoseconds.
    pub a_ns: Series,
    pub a2_ns: Series,
    pub b_ns: Series,
    pub ratio: Series,
    pub floor: Series,
    /// B - A and A' - A of each round, in nanoseconds: the layer's own time per command,
    /// and the same difference between two sides without it.
    pub b_minus_a: Series,
    pub a2_minus_a: Series,
}

impl RowResult {
    /// One round's figures: A, A' and B in nanoseconds per command.
    pub fn push(&mut self, a: f64, a2: f64, b: f64) {
        self.a_ns.push(a);
        self.a2_ns.push(a2);
        self.b_ns.push(b);
        self.ratio.push(b / a);
        self.floor.push(a2 / a);
        self.b_minus_a.push(b - a);
        self.a2_minus_a.push(a2 - a);
    }

    pub fn json(&self) -> Value {
        json!({
            "a_ns": self.a_ns.median(),
            "a2_ns": self.a2_ns.median(),
            "b_ns": self.b_ns.median(),
            "ratio": self.ratio.json(),
            "floor": self.floor.json(),
            "b_minus_a": self.b_minus_a.json(),
            "a2_minus_a": self.a2_minus_a.json(),
        })
    }
}

struct Sides {
    all: [Side; 3],
    /// Per side: one-time command buffers, reusable ones (recorded once).
    one_time: [Vec<vk::CommandBuffer>; 3],
    reusable: [Vec<vk::CommandBuffer>; 3],
    /// Per side, a pool and command buffer for each recording thread.
    threads: [Vec<rows::ThreadPool>; 3],
    /// Per side, the queries the benchmark's own timed draws write (A and A').
    queries: [vk::QueryPool; 3],
    /// Per side, the share row's command buffer, its pool's memory an arena (see
    /// `arena.rs`: the same layout on every side, round and process).
    share: [ArenaPool; 3],
    /// Per side, the command buffers of the rows of each kind (`rows_submits`).
    kinds: [SubmitKinds; 3],
}

const A: usize = 0;
const A2: usize = 1;
const B: usize = 2;

/// Runs one mode (the layer's configuration is this process's environment; B enables
/// `layer`) and returns its rows as a JSON object.
pub fn run_mode(rounds: usize, only: Option<&[&str]>, layer: &str) -> Result<Value> {
    let all = [
        Side::with_layer("A", None)?,
        Side::with_layer("A'", None)?,
        Side::with_layer("B", Some(layer))?,
    ];
    let mut one_time = [vec![], vec![], vec![]];
    let mut reusable = [vec![], vec![], vec![]];
    let mut threads = [vec![], vec![], vec![]];
    let mut queries = [vk::QueryPool::null(); 3];
    let share = [
        ArenaPool::new(&all[A])?,
        ArenaPool::new(&all[A2])?,
        ArenaPool::new(&all[B])?,
    ];
    for (i, s) in all.iter().enumerate() {
        queries[i] = rows::timed_draw_queries(s)?;
        one_time[i] = s.dev.command_buffers(SUBMITS as u32)?;
        reusable[i] = s.dev.command_buffers(SUBMITS as u32)?;
        rows::record_reusable(s, &reusable[i])?;
        threads[i] = (0..THREADS)
            .map(|_| rows::ThreadPool::new(&s.dev))
            .collect::<Result<_>>()?;
    }
    let kinds = [
        SubmitKinds::new(&all[A])?,
        SubmitKinds::new(&all[A2])?,
        SubmitKinds::new(&all[B])?,
    ];
    let sides = Sides {
        all,
        one_time,
        reusable,
        threads,
        queries,
        share,
        kinds,
    };
    type Work = fn(&Sides, usize) -> Result<f64>;
    let table: [(&str, Work); 15] = [
        ("draws", |s, i| rows::draws(&s.all[i])),
        // B as in `draws`; A and A' time each draw themselves (the driver's floor). Each
        // side records into its arena-backed command buffer.
        ("timed_draws", |s, i| {
            let (side, share) = (&s.all[i], &s.share[i]);
            match i {
                B => rows::draws_into(side, share.cb, Some(&share.arena)),
                _ => rows::hand_timed_draws(side, s.queries[i], share.cb, Some(&share.arena)),
            }
        }),
        ("passes", |s, i| {
            rows::passes(&s.all[i], s.share[i].cb, &s.share[i].arena)
        }),
        ("dispatches", |s, i| rows::dispatches(&s.all[i])),
        ("small_submits", |s, i| {
            rows::small_submits(&s.all[i], &s.one_time[i])
        }),
        // B as in `small_submits`; A and A' time each command buffer themselves and
        // signal a timeline semaphore in the batch (the driver's floor for a timed one).
        ("timed_submits", |s, i| match i {
            B => rows::small_submits(&s.all[i], &s.one_time[i]),
            _ => rows::hand_timed_small_submits(&s.all[i], &s.one_time[i], s.queries[i]),
        }),
        ("recorded_submits", |s, i| {
            rows::recorded_submits(&s.all[i], &s.reusable[i])
        }),
        ("paced_resubmits", |s, i| {
            rows::paced_resubmits(&s.all[i], &s.reusable[i])
        }),
        ("stream_passes", |s, i| {
            rows_submits::stream(&s.all[i], &s.kinds[i])
        }),
        ("resubmit_one", |s, i| {
            rows_submits::resubmit_one(&s.all[i], &s.kinds[i])
        }),
        // B as in `resubmit_one`; A and A' also signal a timeline semaphore in each
        // submission, watched by a thread of their own (the driver's floor for learning when
        // each fenced submission completed).
        ("watched_resubmit", |s, i| match i {
            B => rows_submits::resubmit_one(&s.all[i], &s.kinds[i]),
            _ => rows_submits::watched_resubmit_one(&s.all[i], &s.kinds[i]),
        }),
        ("simultaneous", |s, i| {
            rows_submits::simultaneous(&s.all[i], &s.kinds[i])
        }),
        ("secondaries", |s, i| {
            rows_submits::secondaries(&s.all[i], &s.kinds[i])
        }),
        ("threads_1", |s, i| {
            rows::threaded_dispatches(&s.all[i], &s.threads[i][..1])
        }),
        ("threads_8", |s, i| {
            rows::threaded_dispatches(&s.all[i], &s.threads[i])
        }),
    ];
    let mut out = serde_json::Map::new();
    for (name, work) in table
        .into_iter()
        .filter(|(name, _)| only.is_none_or(|o| o.contains(name)))
    {
        // Warm-up: first-use costs (the layer's queue resources, chunk pools) stay out.
        for i in [A, A2, B] {
            work(&sides, i)?;
        }
        let mut row = RowResult::default();
        for round in 0..rounds {
            let mut v = [0.0; 3];
            for k in 0..3 {
                let i = (round + k) % 3;
                v[i] = work(&sides, i)?;
            }
            row.push(v[A], v[A2], v[B]);
        }
        out.insert(name.to_string(), row.json());
    }
    let each = sides
        .threads
        .into_iter()
        .zip(sides.queries)
        .zip(sides.share);
    for (s, ((pools, queries), share)) in sides.all.into_iter().zip(each) {
        for p in pools {
            p.destroy(&s.dev);
        }
        share.destroy(&s);
        // SAFETY: recorded into, never submitted; the command buffers go with the side.
        unsafe { s.dev.device.destroy_query_pool(queries, None) };
        s.destroy();
    }
    Ok(Value::Object(out))
}
