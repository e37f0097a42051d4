//! Where a tracked trace's queries stand, as one word (see `super::Reruns`).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// The queries are reset and no run is in flight.
    Armed,
    /// This submission's run leaves its timestamps in the queries, unread (or is being
    /// prepared: a submission that goes wrapped says so, see `Reruns::wrapped`).
    InQueries(u64),
    /// This submission's run is wrapped: its copy reads the queries and resets them.
    Copying(u64),
    /// Not known (a wrapped submission failed): every later run is wrapped.
    Unknown,
    /// Written by a run that went down without the layer's part (the layer could not
    /// prepare its submission): nobody reads it; the next submission, which Vulkan makes
    /// wait for that run, resets the queries on the host first.
    Untimed,
}

impl Phase {
    /// One word: the state in the low two bits, the submission above them.
    pub fn encode(self) -> u64 {
        match self {
            Phase::Armed => 0,
            Phase::Unknown => 1,
            Phase::Untimed => 1 << 2 | 1,
            Phase::InQueries(s) => s << 2 | 2,
            Phase::Copying(s) => s << 2 | 3,
        }
    }

    pub fn decode(word: u64) -> Phase {
        match word & 3 {
            0 => Phase::Armed,
            1 if word >> 2 == 0 => Phase::Unknown,
            1 => Phase::Untimed,
            2 => Phase::InQueries(word >> 2),
            _ => Phase::Copying(word >> 2),
        }
    }
}
