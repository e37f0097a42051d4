//! What the pipeline statistics of a range are made of (`GPU_TRACE_COUNTERS=pipeline`):
//! the queries a recording takes, the ranges that sum them, and the values an output
//! prints; shared by the recording (`statistics`) and its frozen trace (`recorded_stats`),
//! and by hardware counters (`hardware`).

use ash::vk;

/// The statistics one range gets, in a fixed order (names in [`Counters::NAMES`]).
pub const STATISTICS: usize = 9;
/// Where the compute statistic is among them; the mesh shading ones (task, mesh) follow it.
pub const COMPUTE_AT: usize = 6;

/// What a range shows: the graphics statistics, the compute one, or all (the command
/// buffer's sum; on a family without graphics its sum is of the compute statistic only);
/// or hardware counters (`perf:...`, see [`HardwareSet`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    Graphics,
    Compute,
    All,
    ComputeSum,
    Hardware,
}

/// A counter's value as an output prints it: a count (the statistics, unsigned hardware
/// counters), a signed number, or a real one (a hardware counter stored as a float).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CounterValue {
    Count(u64),
    Signed(i64),
    Real(f64),
}

impl CounterValue {
    /// The value in the txt form (a real as Rust writes it: `100`, `0.25`, `NaN`).
    pub fn push(self, out: &mut String) {
        match self {
            CounterValue::Count(v) => crate::digits::push_u64(out, v),
            CounterValue::Signed(v) => {
                use std::fmt::Write;
                let _ = write!(out, "{v}");
            }
            CounterValue::Real(v) => {
                use std::fmt::Write;
                let _ = write!(out, "{v}");
            }
        }
    }

    /// The value as a JSON number (`null` for a real that is not finite).
    pub fn push_json(self, out: &mut String) {
        match self {
            CounterValue::Real(v) if !v.is_finite() => out.push_str("null"),
            v => v.push(out),
        }
    }

    /// The value as a count, where it is one.
    pub fn count(self) -> Option<u64> {
        match self {
            CounterValue::Count(v) => Some(v),
            _ => None,
        }
    }

    /// The value as a real number (for Perfetto's counter tracks).
    pub fn real(self) -> f64 {
        match self {
            CounterValue::Count(v) => v as f64,
            CounterValue::Signed(v) => v as f64,
            CounterValue::Real(v) => v,
        }
    }
}

/// A device's hardware counters as outputs name them: each counter's key (see
/// `utrace_format::perf_key`) and how its value is stored. Made once per distinct set in the
/// process and kept for its life ([`HardwareSet::interned`]), so that a range's counters
/// stay a plain copy.
#[derive(Debug, PartialEq, Eq)]
pub struct HardwareSet {
    pub keys: Vec<String>,
    pub storage: Vec<vk::PerformanceCounterStorageKHR>,
    /// Each counter's unit (Perfetto's descriptor says it).
    pub units: Vec<vk::PerformanceCounterUnitKHR>,
}

impl HardwareSet {
    /// The process's one copy of this set (a device made again finds the same).
    pub fn interned(
        keys: &[String],
        storage: &[vk::PerformanceCounterStorageKHR],
        units: &[vk::PerformanceCounterUnitKHR],
    ) -> &'static HardwareSet {
        static SETS: parking_lot::Mutex<Vec<&'static HardwareSet>> =
            parking_lot::Mutex::new(Vec::new());
        let mut sets = SETS.lock();
        let same = |s: &&&HardwareSet| s.keys == keys && s.storage == storage && s.units == units;
        if let Some(set) = sets.iter().find(same) {
            return set;
        }
        let set: &'static HardwareSet = Box::leak(Box::new(HardwareSet {
            keys: keys.to_vec(),
            storage: storage.to_vec(),
            units: units.to_vec(),
        }));
        sets.push(set);
        set
    }

    /// Counter `i`'s value from the bits of its `VkPerformanceCounterResultKHR`.
    pub fn value(&self, i: usize, bits: u64) -> CounterValue {
        use vk::PerformanceCounterStorageKHR as S;
        match self.storage.get(i).copied().unwrap_or(S::UINT64) {
            S::INT32 => CounterValue::Signed(i64::from(bits as u32 as i32)),
            S::INT64 => CounterValue::Signed(bits as i64),
            S::UINT32 => CounterValue::Count(u64::from(bits as u32)),
            S::FLOAT32 => CounterValue::Real(f64::from(f32::from_bits(bits as u32))),
            S::FLOAT64 => CounterValue::Real(f64::from_bits(bits)),
            _ => CounterValue::Count(bits),
        }
    }
}

/// One range's pipeline statistics, as an output prints them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counters {
    pub shown: Shown,
    /// In the order of [`Self::NAMES`].
    pub values: [u64; STATISTICS],
    /// An application's own statistics query overlapped the range: the values leave its
    /// part out (`measured` false: all of it).
    pub partial: bool,
    /// Some of the range was measured (else only `partial` is shown).
    pub measured: bool,
    /// The device counts task and mesh shader invocations (`meshShaderQueries`): graphics
    /// ranges and sums show them too.
    pub mesh: bool,
    /// Hardware counters ([`Shown::Hardware`]): `values` holds their results' bits, in the
    /// order of the set's keys.
    pub hardware: Option<&'static HardwareSet>,
}

impl Counters {
    /// The statistics' names in outputs (Vulkan's, in snake case).
    pub const NAMES: [&'static str; STATISTICS] = utrace_format::COUNTER_NAMES;

    /// A command buffer's sum of its ranges (not a range of its own).
    pub fn is_sum(&self) -> bool {
        matches!(self.shown, Shown::All | Shown::ComputeSum)
    }

    /// The (name, value) pairs this range shows: its statistics or hardware counters where
    /// measured, then `partial=1` where an application's own query overlapped it.
    pub fn shown(&self) -> impl Iterator<Item = (&'static str, CounterValue)> + '_ {
        let hardware = self.hardware.filter(|_| self.measured);
        let (first, then) = if self.measured && hardware.is_none() {
            self.statistics()
        } else {
            (0..0, 0..0)
        };
        let keys = hardware.map_or(&[][..], |h| h.keys.as_slice());
        first
            .chain(then)
            .map(|i| (Self::NAMES[i], CounterValue::Count(self.values[i])))
            .chain(keys.iter().enumerate().filter_map(move |(i, key)| {
                let set = hardware?;
                Some((key.as_str(), set.value(i, *self.values.get(i)?)))
            }))
            .chain(self.partial.then_some(("partial", CounterValue::Count(1))))
    }

    /// The indices shown: a range of them, then the mesh shading ones where counted.
    fn statistics(&self) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let mesh = if self.mesh {
            COMPUTE_AT + 1..STATISTICS
        } else {
            0..0
        };
        match self.shown {
            Shown::Graphics => (0..COMPUTE_AT, mesh),
            Shown::Compute | Shown::ComputeSum => (COMPUTE_AT..COMPUTE_AT + 1, 0..0),
            Shown::All => (0..COMPUTE_AT + 1, mesh),
            Shown::Hardware => (0..0, 0..0),
        }
    }
}

/// One query taken by a recording: its pool (an index into the recording's pools) and
/// index in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    pub pool: u32,
    pub query: u32,
}

/// A range that gets statistics: its end event and the queries summed into it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatsRange {
    /// The end event's index among the trace's events.
    pub event: u32,
    /// Which of [`RecordedStats::queries`] are summed (`first..first + count`).
    pub first: u32,
    pub count: u32,
    pub shown: Shown,
    /// An application's own statistics query overlapped it.
    pub partial: bool,
}
