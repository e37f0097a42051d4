//! `utrace-mini-traced PRODUCER_SOCKET CONSUMER_SOCKET`: serves Perfetto's producer and
//! consumer sockets until killed, as traced does (see `mini_traced.cc`). The integration
//! tests start one to exercise the layer's system-backend (on-demand) path.

use std::ffi::{c_char, c_int, CString};
use std::process::ExitCode;

// The SDK archive (libperfetto_c, built by perfetto-sdk-sys for the layer too) holds the
// service that `mini_traced.cc` starts; naming the crate links it.
use perfetto_sdk_sys as _;

#[cfg(test)]
mod amalgamation;

extern "C" {
    fn utrace_mini_traced(producer_socket: *const c_char, consumer_socket: *const c_char) -> c_int;
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [producer, consumer] = args.as_slice() else {
        eprintln!("usage: utrace-mini-traced PRODUCER_SOCKET CONSUMER_SOCKET");
        return ExitCode::from(2);
    };
    let (Ok(producer), Ok(consumer)) = (
        CString::new(producer.as_str()),
        CString::new(consumer.as_str()),
    ) else {
        eprintln!("utrace-mini-traced: socket paths cannot hold NUL");
        return ExitCode::from(2);
    };
    // SAFETY: two NUL-terminated paths that outlive the call, which serves until killed.
    let rc = unsafe { utrace_mini_traced(producer.as_ptr(), consumer.as_ptr()) };
    if rc == 0 {
        ExitCode::SUCCESS
    } else {
        eprintln!("utrace-mini-traced: cannot listen on the sockets");
        ExitCode::FAILURE
    }
}
