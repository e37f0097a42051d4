//! What one sequence (a device's traceq thread writing to one session) has told the trace
//! so far. Perfetto clears it when the session asks (`handles_incremental_state_clear`), and
//! a fresh state re-sends everything: the graphics context, each queue and stage
//! specification as it is next used, a clock snapshot and the application's object names.

use std::collections::HashMap;
use std::time::Instant;

use perfetto_sdk::data_source::Clear;

pub struct SequenceState {
    /// Nothing sent yet: the next packet carries `SEQ_INCREMENTAL_STATE_CLEARED`.
    pub cleared: bool,
    /// Interned `InternedGpuRenderStageSpecification`s (queues and stages share the table).
    pub queues: HashMap<u64, u64>,
    pub stages: HashMap<&'static str, u64>,
    pub labels: HashMap<String, u64>,
    next_iid: u64,
    pub last_snapshot: Option<Instant>,
    /// How many of the sink's object names this sequence has sent.
    pub names_sent: usize,
    /// How many GPU counters the descriptor sent named (`counter_tracks`; 0: none sent).
    pub counters_described: usize,
}

impl Default for SequenceState {
    fn default() -> Self {
        SequenceState {
            cleared: true,
            queues: HashMap::new(),
            stages: HashMap::new(),
            labels: HashMap::new(),
            next_iid: 0,
            last_snapshot: None,
            names_sent: 0,
            counters_described: 0,
        }
    }
}

impl Clear for SequenceState {
    fn clear(&mut self) {
        // Keeps the maps' allocations.
        self.cleared = true;
        self.queues.clear();
        self.stages.clear();
        self.labels.clear();
        self.next_iid = 0;
        self.last_snapshot = None;
        self.names_sent = 0;
        self.counters_described = 0;
    }
}

impl SequenceState {
    /// A new specification id (iids start at 1: 0 means "none" in the protos).
    pub fn next_iid(&mut self) -> u64 {
        self.next_iid += 1;
        self.next_iid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clearing_forgets_everything_sent() {
        let mut s = SequenceState::default();
        assert!(s.cleared);
        s.cleared = false;
        let iid = s.next_iid();
        s.stages.insert("Draw", iid);
        s.names_sent = 3;
        s.clear();
        assert!(s.cleared && s.stages.is_empty() && s.names_sent == 0);
        assert_eq!(s.next_iid(), 1);
    }
}
