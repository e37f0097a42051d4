//! How a device's traced submissions went, from the layer's `UTRACE_LOG=debug` lines that
//! each queue writes when it goes: wrapped (the layer's command buffers recorded, or kept
//! ones run again) or not, runs read or saved at their resubmission, command buffers found
//! in the queue's order or looked up.

/// How a device's traced submissions went, summed over its queues.
#[derive(Debug, Default)]
pub struct Counts {
    /// Wrapped, with the layer's command buffers recorded for the submission.
    pub recorded: u64,
    /// Wrapped, with command buffers kept from a submission of an equal recipe.
    pub by_recipe: u64,
    /// Wrapped, with command buffers kept for the same recording.
    pub by_recording: u64,
    /// Without any command buffer of the layer's.
    pub unwrapped: u64,
    /// Reusable runs read by their command buffer's next submission.
    pub read_at_resubmission: u64,
    /// Reusable runs saved by the GPU in their command buffer's next submission.
    pub saved_at_resubmission: u64,
    /// Traced command buffers found in the order of their queue's submissions, and those
    /// looked up (by their handle).
    pub found_in_order: u64,
    pub looked_up: u64,
}

impl Counts {
    pub fn submissions(&self) -> u64 {
        self.recorded + self.by_recipe + self.by_recording + self.unwrapped
    }
}

/// The last `N` numbers of a line (the queue's handle comes before them).
fn last_numbers<const N: usize>(line: &str) -> [u64; N] {
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().expect("a count"))
        .collect();
    numbers[numbers.len() - N..]
        .try_into()
        .unwrap_or_else(|_| panic!("{N} counts in {line:?}"))
}

/// The sum of every queue's counts in the layer's debug log.
pub fn counts(stderr: &str) -> Counts {
    let mut counts = Counts::default();
    let (mut wrapped, mut unwrapped) = (0, 0);
    for line in stderr.lines() {
        if line.contains("the layer's command buffers were recorded for") {
            let [recorded, by_recipe, by_recording] = last_numbers(line);
            counts.recorded += recorded;
            counts.by_recipe += by_recipe;
            counts.by_recording += by_recording;
            wrapped += 1;
        } else if line.contains("needed no command buffer of the layer's") {
            let [none, read, saved] = last_numbers(line);
            counts.unwrapped += none;
            counts.read_at_resubmission += read;
            counts.saved_at_resubmission += saved;
            unwrapped += 1;
        } else if line.contains("found in the order of the queue's submissions") {
            let [found, looked_up] = last_numbers(line);
            counts.found_in_order += found;
            counts.looked_up += looked_up;
        }
    }
    assert!(
        wrapped > 0 && unwrapped > 0,
        "no count of the layer's command buffers:\n{stderr}"
    );
    counts
}
