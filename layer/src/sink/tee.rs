//! Several sinks fed the same events (`GPU_TRACE_FORMAT=txt,perfetto`).

use super::{BatchInfo, EventPieces, Sink, TraceSummary};

pub struct Tee {
    sinks: Vec<Box<dyn Sink>>,
}

impl Tee {
    /// One sink as itself, several behind a tee.
    pub fn of(mut sinks: Vec<Box<dyn Sink>>) -> Box<dyn Sink> {
        if sinks.len() == 1 {
            sinks.pop().expect("one sink")
        } else {
            Box::new(Tee { sinks })
        }
    }
}

impl Sink for Tee {
    fn batch(&mut self, info: &BatchInfo, events: &mut dyn EventPieces<'_>) {
        // Each sink reads the events afresh: none is kept for the next.
        for s in &mut self.sinks {
            s.batch(info, events);
        }
    }

    fn end_of_frame(&mut self, device: u32, frame: u32) {
        for s in &mut self.sinks {
            s.end_of_frame(device, frame);
        }
    }

    fn end_of_trace(&mut self, summary: &TraceSummary) {
        for s in &mut self.sinks {
            s.end_of_trace(summary);
        }
    }

    fn drain(&mut self, timeout: std::time::Duration) -> usize {
        self.sinks.iter_mut().map(|s| s.drain(timeout)).sum()
    }
}
