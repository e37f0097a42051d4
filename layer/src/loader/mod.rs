//! The bottom of the house, the loader's side: walking the loader's chain info ([`chain`]),
//! the next layer's function tables ([`dispatch`]), every command's aliases
//! ([`command_aliases`]) and the instances and devices keyed by the loader's dispatch key
//! ([`registry`], generic over what is kept for a device).

pub mod chain;
pub mod command_aliases;
pub mod dispatch;
pub mod registry;

pub use registry::{dispatch_key, DispatchKey};
