//! The loader side of the layer: interface negotiation and the exported entry points
//! ([`exports`]), walking the loader's chain info ([`chain`]), the next layer's function
//! tables ([`dispatch`]) and the per-instance and per-device state keyed by the loader's
//! dispatch key ([`registry`]).

pub mod chain;
pub mod dispatch;
pub mod exports;
pub mod registry;

pub use registry::{dispatch_key, DispatchKey};
