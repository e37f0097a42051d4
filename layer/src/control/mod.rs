//! The control socket: captures started from outside a running process, as AGI's GAPII,
//! INTEL_MEASURE's `control=` and the Mesa overlay's control socket allow.
//!
//! A process that loaded the layer with tracing allowed listens on
//! `$XDG_RUNTIME_DIR/utrace/<pid>.sock` (the folder the user's alone, 0700, checked by
//! `folder.rs`; the socket 0600; none without `XDG_RUNTIME_DIR`, with `UTRACE_DISABLE=1`,
//! with the `control` setting false, or when the folder is refused). One
//! request per connection, one line (at most [`request::MAX_LINE`] bytes), replies as lines:
//!
//! - `status` -> `ok pid=P name=N devices=D capturing=0|1 batches=B` (`capturing`: a
//!   capture or a watch is in progress; `batches`: batches traced so far, by any output)
//! - `capture frames=N format=txt|json|csv path=ABSOLUTE` -> `started`, then, once the N
//!   frames after the current one are written, `done frames=.. batches=.. events=..
//!   dropped=.. file=PATH`; or, when `stop`, the devices' end or the process's exit cut it
//!   short, `ended frames=K batches=.. events=.. dropped=.. asked=N [stopped=1] file=PATH`
//!   (K frames written; `stopped=1` when `stop` ended it). `file` goes last, as a path may
//!   hold spaces: the path asked for, or a pid-named one beside it when another process
//!   was writing that one
//! - `watch` -> `started`, then a `second ...` line a second (see `watch.rs`) until the
//!   client closes the connection or sends a line; `done stopped=1` when `stop` ended it,
//!   `done gone=1` when the devices went. Traces only while it lasts.
//! - `stop` -> `ok stopped` (ends a capture or a watch)
//! - anything else, or a peer of another user (`SO_PEERCRED`) -> `error ...`
//!
//! The socket is served by a thread of its own, each connection by a short-lived thread
//! (at most 4 at once; more are answered `error the layer is busy ...`); nothing here runs
//! on an application's call.

mod capture;
mod folder;
mod peer;
pub mod request;
mod server;
mod watch;

pub use capture::answered as captures_answered;
pub use server::{remove_socket, start};
