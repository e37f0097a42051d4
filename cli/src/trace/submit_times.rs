//! Batches' submit times as the readers find them: a value that is not a time is said and
//! left out, and so is one no clock pairing could have given (after the batch began, or an
//! hour before it), rather than counted as a latency.

use super::Trace;

/// How far after its batch's first event a submit time may be (the clock pairing's error:
/// a measured clock's bound is tens of µs at worst).
const AFTER_START_NS: u64 = 1_000_000;
/// How long before its first event a batch may have been submitted.
const BEFORE_START_NS: u64 = 3_600_000_000_000;

/// A `submitted` value as written: `Ok(None)` when absent (older layers), an error saying
/// why when it is not a time.
pub fn parse(raw: Option<&str>) -> Result<Option<u64>, String> {
    match raw {
        None => Ok(None),
        Some(v) => match v.parse::<u64>() {
            Ok(ns) if ns > 0 => Ok(Some(ns)),
            _ => Err(format!(
                "submitted={v:?} is not a time; the batch's submit time is left out"
            )),
        },
    }
}

/// Leaves out, with a note each, submit times that cannot be the batch's.
pub fn check(trace: &mut Trace) {
    for b in &mut trace.batches {
        let (Some(s), Some(first)) = (b.submit_ns, b.events.first().map(|e| e.ns)) else {
            continue;
        };
        let why = if s > first.saturating_add(AFTER_START_NS) {
            Some("after the batch's first event")
        } else if first.saturating_sub(s) > BEFORE_START_NS {
            Some("an hour or more before the batch's first event")
        } else {
            None
        };
        if let Some(why) = why {
            trace.notes.push(format!(
                "batch {} of device {}: its submit time {s} is {why} ({first}); left out",
                b.number, b.device
            ));
            b.submit_ns = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Batch, Event};

    #[test]
    fn values_that_are_not_times_are_said() {
        assert_eq!(parse(None), Ok(None));
        assert_eq!(parse(Some("123")), Ok(Some(123)));
        for bad in ["-5", "abc", "", "0", "1.5e13", "100000000000000000000000"] {
            assert!(
                parse(Some(bad)).unwrap_err().contains("not a time"),
                "{bad}"
            );
        }
    }

    #[test]
    fn impossible_submit_times_are_left_out_with_a_note() {
        let batch = |number, submit_ns, first| Batch {
            device: 0,
            number,
            queue: None,
            frame: 0,
            submission: number,
            thread: None,
            submit_ns,
            events: vec![Event::at(first, "start_cmd_buffer", "")],
        };
        let mut trace = Trace {
            batches: vec![
                batch(1, Some(5_000_000_000_000), 5_000_000_040_000),
                // A measured clock's error: slightly after the start.
                batch(2, Some(5_000_000_100_500), 5_000_000_100_000),
                batch(3, Some(u64::MAX), 5_000_000_200_000),
                batch(4, Some(1), 5_000_000_300_000),
                batch(5, None, 5_000_000_400_000),
            ],
            origins: Vec::new(),
            notes: vec![],
        };
        check(&mut trace);
        let kept: Vec<Option<u64>> = trace.batches.iter().map(|b| b.submit_ns).collect();
        assert_eq!(
            kept,
            [
                Some(5_000_000_000_000),
                Some(5_000_000_100_500),
                None,
                None,
                None
            ]
        );
        assert_eq!(trace.notes.len(), 2, "{:?}", trace.notes);
        assert!(trace.notes[0].starts_with("batch 3 of device 0"));
        assert!(trace.notes[1].contains("an hour or more before"));
    }
}
