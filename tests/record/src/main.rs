//! `utrace-perfetto-record OUT`: connects to the tracing service whose consumer socket
//! `PERFETTO_CONSUMER_SOCK_NAME` names, starts a session that enables
//! `gpu.renderstages.utrace`, prints `started`, waits for a line (or the end) on stdin,
//! stops the session, writes the whole trace to OUT and prints `written BYTES`.
//! The integration tests drive it to start and stop a session while an application runs.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use perfetto_sdk::producer::{Backends, Producer, ProducerInitArgsBuilder};
use perfetto_sdk::tracing_session::TracingSession;

fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: utrace-perfetto-record OUT");
        return ExitCode::from(2);
    };
    Producer::init(
        ProducerInitArgsBuilder::new()
            .backends(Backends::SYSTEM)
            .build(),
    );
    let mut session = match TracingSession::system() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("utrace-perfetto-record: no session ({e})");
            return ExitCode::FAILURE;
        }
    };
    session.setup(&VkLayer_utrace::sink::perfetto::session_config(16 * 1024));
    session.start_blocking();
    println!("started");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    session.stop_blocking();
    let bytes = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&bytes);
    session.read_trace_blocking(move |data, _| {
        if let Ok(mut b) = sink.lock() {
            b.extend_from_slice(data);
        }
    });
    let bytes = std::mem::take(&mut *bytes.lock().unwrap_or_else(|e| e.into_inner()));
    if let Err(e) = std::fs::write(&out, &bytes) {
        eprintln!("utrace-perfetto-record: {out}: {e}");
        return ExitCode::FAILURE;
    }
    println!("written {}", bytes.len());
    ExitCode::SUCCESS
}
