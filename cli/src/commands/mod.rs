//! The subcommands of `utrace`, one module each, each with its own arguments.

pub mod bench;
pub mod capture;
pub mod convert;
pub mod counters;
pub mod diff;
pub mod docs;
pub mod install;
pub mod layer_page;
pub mod list;
pub mod report;
pub mod run;
pub mod top;
pub mod view;
