//! The layer's entry points, on top of the house: what the loader calls first and what the
//! process does once, around the hooks.
//!
//! - [`exported`]: the symbols the loader looks up in the library;
//! - [`proc_addr`]: interface negotiation and `vkGet*ProcAddr`, answering with the entry's
//!   own functions, the hooks', or the next layer's;
//! - [`properties`]: the enumerate functions (the layer and its one extension);
//! - [`creation`]: `vkCreateInstance` and `vkCreateDevice`: what the process does once
//!   around the hooks that build the chains;
//! - [`process_config`]: the process's configuration, made once at the first instance,
//!   and what it changes in the process (the logger, the tracepoint switches);
//! - [`process_exit`]: closing the traces when the process exits.

pub mod creation;
pub mod exported;
pub mod proc_addr;
pub mod process_config;
pub mod process_exit;
pub mod properties;
