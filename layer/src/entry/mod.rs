//! The layer's entry points, on top of the house: what the loader calls first and what the
//! process does around the devices.
//!
//! - [`exported`]: the symbols the loader looks up in the library;
//! - [`proc_addr`]: interface negotiation and `vkGet*ProcAddr`, answering with the entry's
//!   own functions, the hooks', or the next layer's;
//! - [`properties`]: the enumerate functions (the layer and its one extension);
//! - [`device_creation`]: `vkCreateDevice`: the hook, then what a process that traces a
//!   device sets up once (the exit handler, the control socket);
//! - [`process_exit`]: closing the traces when the process exits.

pub mod device_creation;
pub mod exported;
pub mod proc_addr;
pub mod process_exit;
pub mod properties;
