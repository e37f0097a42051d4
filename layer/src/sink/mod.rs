//! Output formats. A sink only knows [`Event`]s and the batch, frame and trace boundaries
//! around them (u_trace's printer callbacks); [`output`] is where the bytes go.

pub mod csv;
pub mod json;
pub mod output;
mod ranges;
pub mod txt;

use crate::config::{Config, Format};
use crate::trace::tracepoints::Payload;

/// One timestamped tracepoint.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    /// Absolute GPU time in nanoseconds.
    pub ns: u64,
    pub payload: &'a Payload,
    /// The labels of the command trace the event belongs to (see `LabelRef`).
    pub strings: &'a [u8],
}

/// What the header of a batch shows.
#[derive(Clone, Debug)]
pub struct BatchInfo {
    /// The device's traced batches, counted from 1.
    pub number: u64,
    pub device: u32,
    pub queue: u64,
    pub frame: u32,
    pub submission: u64,
    pub cmdbufs: u32,
    /// Timestamp queries the batch wrote (secondaries' included).
    pub queries: u32,
}

/// Closing counts of a device's trace.
#[derive(Clone, Debug)]
pub struct TraceSummary {
    pub device: u32,
    pub batches: u64,
    pub events: u64,
    pub dropped: u64,
}

pub trait Sink: Send {
    /// A completed batch, its events in submission order.
    fn batch(&mut self, info: &BatchInfo, events: &[Event<'_>]);
    /// `vkQueuePresentKHR` ended `frame`.
    fn end_of_frame(&mut self, device: u32, frame: u32);
    /// The device is going (or the process is exiting).
    fn end_of_trace(&mut self, summary: &TraceSummary);
}

/// The sink `config` asks for, writing to its destination for device `device_index`.
pub fn open(config: &Config, device_index: u32) -> Box<dyn Sink> {
    let out = output::Output::open(&config.destination, device_index);
    match config.format {
        Format::Txt => Box::new(txt::TxtSink::new(out)),
        Format::Json => Box::new(json::JsonSink::new(out)),
        Format::Csv => Box::new(csv::CsvSink::new(out)),
    }
}
