//! The submit side (u_trace_flush): a traced submission's command buffers collected into a
//! pending submission, the layer's command buffers recorded around them, the application's
//! batches submitted, and the result committed as a [`batch::Batch`] for the traceq thread.

pub mod batch;
mod cross_queue;
mod pending_submission;
pub mod queues;
mod saves;
mod segment_lists;
mod submit_flow;
