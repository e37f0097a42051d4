//! Both tracepoints of a bracketed command (a draw, a dispatch) recorded at once, before
//! the command goes down: the short path of the hot path. Nothing is recorded between a
//! command's two tracepoints, so its end event may be stored with its start; only the end's
//! timestamp waits for the command.

use super::CommandTrace;
use crate::trace::record::chunk::RecordedEvent;
use crate::trace::record::query_slots::Place;

/// Where a bracketed command's two timestamps go: the start's, written before the command
/// (top of pipe), and the end's, written after it (bottom of pipe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bracket {
    pub start: Place,
    pub end: Place,
}

impl<const MAX_WORDS: usize> CommandTrace<MAX_WORDS> {
    /// Records the events of tracepoints `start` (its arguments as `words`) and `end` (no
    /// arguments) and takes their queries, if the short path has room for both (see
    /// `fast_left`: it counts the room in the event and argument lists and in the current
    /// chunk of queries). The caller then writes the two timestamps around the command.
    /// `None` leaves the trace unchanged, for [`Self::append`] one tracepoint at a time.
    #[inline(always)]
    pub fn append_bracket<const N: usize>(
        &mut self,
        start: usize,
        end: usize,
        words: [u32; N],
    ) -> Option<Bracket> {
        const { assert!(N <= MAX_WORDS, "a start's words are counted as MAX_WORDS") };
        if self.fast_left < 2 {
            return None;
        }
        debug_assert!(self.events.capacity() - self.events.len() >= 2);
        debug_assert!(self.args.capacity() - self.args.len() >= N);
        self.fast_left -= 2;
        let bracket = Bracket {
            start: self.queries.take_one(),
            end: self.queries.take_one(),
        };
        self.last_slot = Some(bracket.end.slot);
        let (events, args) = (self.events.len(), self.args.len());
        // SAFETY: `fast_left` >= 2 counts room for two more events and two tracepoints'
        // most words (`MAX_WORDS` >= N) in the lists' capacity (see `refresh_fast`), so the
        // writes stay inside the allocations and the new lengths cover written values.
        // Stored directly, not pushed: a push's test of the capacity, with its path that
        // grows the list, kept registers on the stack across the hook (about 2.5 ns of a
        // traced draw on Lavapipe, measured with the benchmark's share row).
        unsafe {
            let at = self.events.as_mut_ptr().add(events);
            at.write(RecordedEvent {
                id: start as u16,
                slot: bracket.start.slot,
            });
            at.add(1).write(RecordedEvent {
                id: end as u16,
                slot: bracket.end.slot,
            });
            self.events.set_len(events + 2);
            let at = self.args.as_mut_ptr().add(args).cast::<[u32; N]>();
            at.write_unaligned(words);
            self.args.set_len(args + N);
        }
        Some(bracket)
    }
}

#[cfg(test)]
mod tests {
    use ash::vk;

    use super::*;

    type Trace = CommandTrace<8>;

    fn event_ids(trace: &Trace) -> Vec<(u16, u32)> {
        trace.events.iter().map(|e| (e.id, e.slot)).collect()
    }

    #[test]
    fn a_trace_without_room_for_both_records_nothing() {
        let mut trace = Trace::new(vk::CommandPool::null(), 0, vk::CommandBufferLevel::PRIMARY);
        // Not recording: no room on the short path.
        assert_eq!(trace.append_bracket(7, 8, [1, 2, 3]), None);
        trace.fast_left = 1;
        assert_eq!(trace.append_bracket(7, 8, [1, 2, 3]), None);
        assert!(trace.events.is_empty() && trace.args.is_empty());
        assert_eq!(trace.fast_left, 1);
    }

    #[test]
    fn both_events_take_consecutive_queries_and_the_start_keeps_the_words() {
        let mut trace = Trace::new(vk::CommandPool::null(), 0, vk::CommandBufferLevel::PRIMARY);
        trace.events.reserve(4);
        trace.args.reserve(16);
        trace.queries.pretend_chunk(4);
        trace.fast_left = 4;
        let first = trace.append_bracket(7, 8, [1, 2, 3]).unwrap();
        let second = trace.append_bracket(9, 10, [4]).unwrap();
        let q = first.start.query;
        assert_eq!(
            [first.end.query, second.start.query, second.end.query],
            [q + 1, q + 2, q + 3]
        );
        assert_eq!(event_ids(&trace), [(7, 0), (8, 1), (9, 2), (10, 3)]);
        assert_eq!(trace.args, [1, 2, 3, 4]);
        assert_eq!(trace.last_slot, Some(3));
        assert_eq!(trace.fast_left, 0);
        assert_eq!(trace.append_bracket(7, 8, [5]), None, "the room is used up");
    }
}
