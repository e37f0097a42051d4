//! The loader side of the layer: interface negotiation and the exported entry points
//! ([`exports`]), walking the loader's chain info ([`chain`]), the next layer's function
//! tables ([`dispatch`]), every command's aliases ([`command_aliases`]) and the per-instance and per-device state keyed by the loader's
//! dispatch key ([`registry`]), and closing the traces when the process exits
//! ([`process_exit`]).

pub mod chain;
pub mod command_aliases;
pub mod dispatch;
pub mod exports;
pub mod process_exit;
pub mod registry;

pub use registry::{dispatch_key, DispatchKey};
