//! Writing to the C library's `stdout` stream, as Mesa's u_trace does, instead of to file
//! descriptor 1. An application's `printf` output waits in that stream's buffer; text
//! written past it to the descriptor would land in the middle of the application's lines.
//! Through the stream, each record is appended after what the application wrote, under the
//! stream's lock, and the flush writes both in order.

use std::io;

extern "C" {
    /// glibc's `stdout` (`FILE *`), which the `libc` crate does not declare.
    static mut stdout: *mut libc::FILE;
}

/// Writes `bytes` to `stdout` and flushes it; the error of the failed call otherwise.
pub fn write(bytes: &[u8]) -> io::Result<()> {
    // SAFETY: `stdout` is initialised by the C library before any library is loaded and
    // stays valid until exit; reading the pointer races with nothing that writes it (an
    // application reassigning `stdout` is undefined behaviour in C itself). `fwrite` and
    // `fflush` lock the stream; `bytes` is valid for its length.
    unsafe {
        let stream = stdout;
        if stream.is_null() {
            return Err(io::Error::other("the C library has no stdout"));
        }
        let written = libc::fwrite(bytes.as_ptr().cast(), 1, bytes.len(), stream);
        let result = if written < bytes.len() || libc::fflush(stream) != 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        };
        if result.is_err() {
            // The stream's error flag would make every later write fail too.
            libc::clearerr(stream);
        }
        result
    }
}
