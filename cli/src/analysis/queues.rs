//! Per queue, the GPU time covered by its ranges, and for each two queues of a device the
//! time both were busy (async compute or transfer running beside graphics). Queues of
//! different devices are not compared: their timestamps are on different clocks.

use std::collections::BTreeMap;

use crate::analysis::ranges::Range;
use crate::analysis::stats::covered;

/// (begin, end) nanoseconds.
type Spans = Vec<(u64, u64)>;

/// A queue: its device, and its handle when the format says it (csv does not).
pub type QueueKey = (u32, Option<u64>);

pub struct QueueBusy {
    pub queue: QueueKey,
    pub busy_ns: u64,
}

pub struct Overlap {
    pub a: QueueKey,
    pub b: QueueKey,
    /// Time both queues were running work.
    pub overlap_ns: u64,
}

pub struct Queues {
    pub busy: Vec<QueueBusy>,
    pub overlaps: Vec<Overlap>,
}

pub fn of(ranges: &[Range<'_>]) -> Queues {
    let mut spans: BTreeMap<QueueKey, Spans> = BTreeMap::new();
    for r in ranges {
        spans
            .entry((r.batch.device, r.batch.queue))
            .or_default()
            .push((r.begin_ns, r.end_ns.max(r.begin_ns)));
    }
    let busy: Vec<QueueBusy> = spans
        .iter_mut()
        .map(|(q, s)| QueueBusy {
            queue: *q,
            busy_ns: covered(s),
        })
        .collect();
    let mut overlaps = Vec::new();
    let keys: Vec<&QueueKey> = spans.keys().collect();
    for (i, a) in keys.iter().enumerate() {
        for b in keys.iter().skip(i + 1).filter(|b| b.0 == a.0) {
            let (sa, sb) = (&spans[*a], &spans[*b]);
            let mut both: Spans = sa.iter().chain(sb).copied().collect();
            let (ca, cb) = (covered(&mut sa.clone()), covered(&mut sb.clone()));
            overlaps.push(Overlap {
                a: **a,
                b: **b,
                overlap_ns: ca + cb - covered(&mut both),
            });
        }
    }
    Queues { busy, overlaps }
}

/// A queue as the report names it.
pub fn name(q: &QueueKey) -> String {
    match q.1 {
        Some(handle) => format!("device {} queue {handle:#x}", q.0),
        None => format!("device {} queue ?", q.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Batch;

    #[test]
    fn two_queues_of_a_device_overlap_where_both_run() {
        let graphics = Batch {
            queue: Some(1),
            ..Batch::default()
        };
        let compute = Batch {
            queue: Some(2),
            ..Batch::default()
        };
        let other_device = Batch {
            device: 1,
            queue: Some(1),
            ..Batch::default()
        };
        let r = |batch, begin_ns, end_ns| Range {
            range: "cmd_buffer",
            begin_ns,
            end_ns,
            args: "",
            end_args: "",
            batch,
        };
        let ranges = [
            r(&graphics, 0, 100),
            r(&graphics, 20, 50),
            r(&compute, 80, 150),
            r(&compute, 160, 170),
            r(&other_device, 0, 1000),
        ];
        let q = of(&ranges);
        let busy: Vec<u64> = q.busy.iter().map(|b| b.busy_ns).collect();
        assert_eq!(busy, [100, 80, 1000]);
        assert_eq!(q.overlaps.len(), 1, "queues of one device only");
        assert_eq!(q.overlaps[0].overlap_ns, 20);
        assert_eq!(name(&q.overlaps[0].b), "device 0 queue 0x2");
    }
}
